# bash completion for mxc (installed as .../bash-completion/completions/mxc)
_mxc() {
    local cur prev sub
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    sub=${COMP_WORDS[1]}
    local subs="run create start stop rm exec shell ls inspect gc"
    local policy="--rw --ro --deny --net --allow-host --block-host --proxy --policy"
    local process="--env --cwd --timeout"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$subs --help --version" -- "$cur"))
        return
    fi
    case $prev in
        --rw|--ro|--deny|--cwd|--policy) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --net) COMPREPLY=($(compgen -W "block allow allow-local" -- "$cur")); return ;;
    esac
    local flags names
    case $sub in
        run) flags="$policy $process -c --print-request --json --help" ;;
        create) flags="--name $policy --print-request --json --help" ;;
        exec) flags="$process -c --print-request --json --help" ;;
        shell) flags="--env --help" ;;
        ls|gc) flags="--json --help" ;;
        *) flags="--json --help" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    case $sub in
        start|stop|rm|exec|shell|inspect)
            names=$(mxc ls --json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin):
    if s["kind"] == "session": print(s.get("name") or s["agentName"])' 2>/dev/null)
            COMPREPLY=($(compgen -W "$names" -- "$cur")) ;;
    esac
}
complete -F _mxc mxc
