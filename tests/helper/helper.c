/* mxc-test-helper — a multi-call probe binary for the integration and escape tests.
 *
 * Usage: mxc-test-helper VERB [ARGS...]
 *
 * Every verb prints a line "VERB: RESULT" on stdout, where RESULT is "ok" when the attempted
 * operation succeeded, or the errno name (EPERM, ENOSYS, EROFS, ...) of the refusal, and exits 0,
 * so that a test can assert the specific refusal rather than just a non-zero status.  Some verbs
 * print further lines (details, or sub-attempts with their own "NAME: RESULT" prefix).
 * Unknown verbs and bad arguments exit 2.
 *
 * C17, libc only.  Built by meson as mxc-test-helper.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>

#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/tiocl.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef KEYCTL_GET_KEYRING_ID
#define KEYCTL_GET_KEYRING_ID 0
#endif
#ifndef KEY_SPEC_SESSION_KEYRING
#define KEY_SPEC_SESSION_KEYRING (-3)
#endif
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif

/* verbs take (argc, argv) after the verb; many ignore them */
#define VERB_ARGS int argc __attribute__((unused)), char **argv __attribute__((unused))

/* ---- output ---------------------------------------------------------------------------- */

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	static char buf[32];
	if (n)
		return n;
	snprintf(buf, sizeof buf, "E%d", e);
	return buf;
}

static void report(const char *verb, long rc, int err)
{
	if (rc < 0)
		printf("%s: %s\n", verb, errname(err));
	else
		printf("%s: ok\n", verb);
	fflush(stdout);
}

#define TRY(verb, expr)                                                                          \
	do {                                                                                     \
		errno = 0;                                                                       \
		long rc_ = (long)(expr);                                                         \
		report((verb), rc_, errno);                                                      \
	} while (0)

static int usage(const char *msg)
{
	fprintf(stderr, "mxc-test-helper: %s\n", msg);
	return 2;
}

static long parse_long(const char *s, int *ok)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	*ok = (errno == 0 && end != s && *end == '\0');
	return v;
}

/* ---- terminal ---------------------------------------------------------------------------- */

/* TIOCSTI against fd 0 (whatever the sandbox gave us: on a pipe or /dev/null the kernel itself
 * would answer ENOTTY, so EPERM there is the filter's answer), with the high bits set in the
 * request number (CVE-2019-10063), and against a fresh pty that we make our own controlling
 * terminal (where the kernel, with legacy_tiocsti=1, would let the injection through). */
static int tiocsti_fd(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return fd;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	return 0;
}

static void tiocsti_own_pty(void)
{
	int p[2];
	if (pipe(p) < 0) {
		report("tiocsti_pty", -1, errno);
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		report("tiocsti_pty", -1, errno);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		int res = 0;
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
			res = 1000 + errno;
		} else if (setsid() < 0) {
			res = 2000 + errno;
		} else {
			const char *sn = ptsname(m);
			int s = sn ? open(sn, O_RDWR) : -1;
			if (s < 0) {
				res = 1000 + errno;
			} else {
				(void)ioctl(s, TIOCSCTTY, 0);
				char c = '#';
				errno = 0;
				res = ioctl(s, TIOCSTI, &c) < 0 ? errno : 0;
			}
		}
		if (write(p[1], &res, sizeof res) != (ssize_t)sizeof res)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	int res = -1;
	ssize_t n = read(p[0], &res, sizeof res);
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (n != (ssize_t)sizeof res)
		printf("tiocsti_pty: setup-failed\n");
	else if (res == 0)
		printf("tiocsti_pty: ok\n");
	else if (res >= 2000)
		printf("tiocsti_pty: setup-failed setsid %s\n", errname(res - 2000));
	else if (res >= 1000)
		printf("tiocsti_pty: setup-failed pty %s\n", errname(res - 1000));
	else
		printf("tiocsti_pty: %s\n", errname(res));
	fflush(stdout);
}

static int v_tiocsti(VERB_ARGS)
{
	int fd = tiocsti_fd();
	char c = '#';
	printf("tiocsti_target: fd=%d isatty=%d\n", fd, isatty(fd));
	TRY("tiocsti", ioctl(fd, TIOCSTI, &c));
	TRY("tiocsti_hibits",
	    syscall(SYS_ioctl, fd, (unsigned long)TIOCSTI | 0xffffffff00000000UL, &c));
	if (argc < 1 || strcmp(argv[0], "--no-pty") != 0)
		tiocsti_own_pty();
	return 0;
}

static int v_tiocsti_hibits(VERB_ARGS)
{
	char c = '#';
	TRY("tiocsti_hibits",
	    syscall(SYS_ioctl, tiocsti_fd(), (unsigned long)TIOCSTI | 0xffffffff00000000UL, &c));
	return 0;
}

static int v_tioclinux(VERB_ARGS)
{
	char sub = TIOCL_GETSHIFTSTATE;
	TRY("tioclinux", ioctl(tiocsti_fd(), TIOCLINUX, &sub));
	return 0;
}

static int v_devtty(VERB_ARGS)
{
	TRY("devtty", open("/dev/tty", O_RDWR | O_CLOEXEC));
	return 0;
}

/* ---- keys, bpf, perf, uffd, io_uring ----------------------------------------------------- */

static int v_keyctl(VERB_ARGS)
{
	TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
	return 0;
}

static int v_add_key(VERB_ARGS)
{
	TRY("add_key", syscall(SYS_add_key, "user", "mxc-test", "x", (size_t)1,
			       KEY_SPEC_SESSION_KEYRING));
	return 0;
}

static int v_request_key(VERB_ARGS)
{
	TRY("request_key", syscall(SYS_request_key, "user", "mxc-test", NULL, 0));
	return 0;
}

static int v_bpf(VERB_ARGS)
{
	/* BPF_MAP_CREATE (0) of an array map with one 4-byte element */
	uint32_t attr[32];
	memset(attr, 0, sizeof attr);
	attr[0] = 2; /* BPF_MAP_TYPE_ARRAY */
	attr[1] = 4; /* key size */
	attr[2] = 4; /* value size */
	attr[3] = 1; /* max entries */
	TRY("bpf", syscall(SYS_bpf, 0, attr, sizeof attr));
	return 0;
}

static int v_perf_event_open(VERB_ARGS)
{
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof pe;
	pe.config = PERF_COUNT_SW_CPU_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	TRY("perf_event_open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
	return 0;
}

static int v_userfaultfd(VERB_ARGS)
{
	TRY("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
	return 0;
}

static int v_io_uring_setup(VERB_ARGS)
{
	unsigned char params[120]; /* struct io_uring_params */
	memset(params, 0, sizeof params);
	TRY("io_uring_setup", syscall(SYS_io_uring_setup, 4, params));
	return 0;
}

/* ---- namespaces, mounts ------------------------------------------------------------------- */

static int v_unshare_user(VERB_ARGS)
{
	TRY("unshare_user", unshare(CLONE_NEWUSER));
	return 0;
}

static int v_unshare(VERB_ARGS)
{
	static const struct {
		const char *name;
		int flag;
	} tbl[] = {{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},   {"pid", CLONE_NEWPID},
		   {"net", CLONE_NEWNET},   {"uts", CLONE_NEWUTS},   {"ipc", CLONE_NEWIPC},
		   {"cgroup", CLONE_NEWCGROUP}};
	if (argc < 1)
		return usage("unshare NS");
	for (size_t i = 0; i < sizeof tbl / sizeof tbl[0]; i++)
		if (strcmp(argv[0], tbl[i].name) == 0) {
			TRY("unshare", unshare(tbl[i].flag));
			return 0;
		}
	return usage("unshare: unknown namespace");
}

static int v_clone3_newuser(VERB_ARGS)
{
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	errno = 0;
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		_exit(0);
	int err = errno;
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	report("clone3_newuser", pid, err);
	return 0;
}

static int v_clone_newuser(VERB_ARGS)
{
	errno = 0;
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);
	if (pid == 0)
		_exit(0);
	int err = errno;
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	report("clone_newuser", pid, err);
	return 0;
}

static int v_setns(VERB_ARGS)
{
	const char *path = argc >= 1 ? argv[0] : "/proc/1/ns/mnt";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("setns: open %s\n", errname(errno));
		return 0;
	}
	TRY("setns", setns(fd, 0));
	return 0;
}

static int v_mount_tmpfs(VERB_ARGS)
{
	TRY("mount_tmpfs", mount("none", argc >= 1 ? argv[0] : "/tmp", "tmpfs", 0, NULL));
	return 0;
}

static int v_mount_proc(VERB_ARGS)
{
	TRY("mount_proc", mount("proc", argc >= 1 ? argv[0] : "/tmp", "proc", 0, NULL));
	return 0;
}

static int v_umount(VERB_ARGS)
{
	if (argc < 1)
		return usage("umount PATH");
	TRY("umount", umount2(argv[0], MNT_DETACH));
	return 0;
}

static int v_fsopen(VERB_ARGS)
{
	TRY("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	return 0;
}

static int v_open_tree(VERB_ARGS)
{
	TRY("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
	return 0;
}

static int v_pivot_root(VERB_ARGS)
{
	TRY("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	return 0;
}

static int v_chroot_escape(VERB_ARGS)
{
	struct stat before, after;
	if (stat("/", &before) < 0)
		return usage("stat /");
	char dir[] = "/tmp/mxc-chroot-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("chroot_escape: mkdtemp %s\n", errname(errno));
		return 0;
	}
	errno = 0;
	if (chroot(dir) < 0) {
		int e = errno;
		rmdir(dir);
		report("chroot_escape", -1, e);
		return 0;
	}
	/* chroot succeeded (only with CAP_SYS_CHROOT): try the classic ".." walk out of it */
	for (int i = 0; i < 256; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0) {
		printf("chroot_escape: chrooted-but-walk-failed %s\n", errname(errno));
		return 0;
	}
	if (stat("/", &after) < 0)
		return usage("stat / after");
	if (after.st_dev != before.st_dev || after.st_ino != before.st_ino)
		printf("chroot_escape: escaped\n");
	else
		printf("chroot_escape: chroot-allowed-contained\n");
	return 0;
}

/* "/.." is "/" and openat(rootfd, "..") stays at the root */
static int v_dotdot(VERB_ARGS)
{
	struct stat r, up, fdup;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ufd = fd >= 0 ? openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (stat("/", &r) < 0 || stat("/../../..", &up) < 0 || ufd < 0 || fstat(ufd, &fdup) < 0) {
		report("dotdot", -1, errno);
		return 0;
	}
	if (r.st_ino == up.st_ino && r.st_dev == up.st_dev && r.st_ino == fdup.st_ino &&
	    r.st_dev == fdup.st_dev)
		printf("dotdot: contained\n");
	else
		printf("dotdot: escaped\n");
	return 0;
}

/* Safety: the dangerous verbs (kill of -1 / a process group, forkbomb) only run inside a PID
 * namespace, i.e. when our pid is small, so that a broken runtime (or running the helper
 * directly on the host) cannot take the host down.  They then report "refused-not-isolated". */
static int isolated_pidns(void)
{
	return getpid() < 1000;
}

/* ---- processes --------------------------------------------------------------------------- */

static int v_ptrace_attach(VERB_ARGS)
{
	int ok;
	if (argc < 1)
		return usage("ptrace_attach PID");
	long pid = parse_long(argv[0], &ok);
	if (!ok)
		return usage("ptrace_attach: bad pid");
	errno = 0;
	long rc = ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL);
	int e = errno;
	if (rc == 0) {
		waitpid((pid_t)pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
	}
	report("ptrace_attach", rc, e);
	return 0;
}

static int v_kill(VERB_ARGS)
{
	int ok1, ok2;
	if (argc < 2)
		return usage("kill PID SIG");
	long pid = parse_long(argv[0], &ok1);
	long sig = parse_long(argv[1], &ok2);
	if (!ok1 || !ok2)
		return usage("kill: bad arguments");
	if (pid <= 0 && !isolated_pidns()) {
		printf("kill: refused-not-isolated\n");
		return 0;
	}
	TRY("kill", kill((pid_t)pid, (int)sig));
	return 0;
}

static int v_pidfd_open(VERB_ARGS)
{
	int ok;
	if (argc < 1)
		return usage("pidfd_open PID");
	long pid = parse_long(argv[0], &ok);
	if (!ok)
		return usage("pidfd_open: bad pid");
	TRY("pidfd_open", syscall(SYS_pidfd_open, (pid_t)pid, 0));
	return 0;
}

static int v_process_vm_readv(VERB_ARGS)
{
	int ok;
	if (argc < 2)
		return usage("process_vm_readv PID HEXADDR");
	long pid = parse_long(argv[0], &ok);
	if (!ok)
		return usage("process_vm_readv: bad pid");
	unsigned long addr = strtoul(argv[1], NULL, 16);
	char buf[16];
	struct iovec l = {buf, sizeof buf}, r = {(void *)addr, sizeof buf};
	TRY("process_vm_readv", process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0));
	return 0;
}

/* fork until fork fails or MAX children exist, report "forkbomb: ERRNO count=N" (or
 * "forkbomb: ok count=MAX" when never refused: unbounded), then let every child exit. */
static int v_forkbomb(VERB_ARGS)
{
	long max = 8192;
	int ok;
	if (argc >= 1) {
		max = parse_long(argv[0], &ok);
		if (!ok || max <= 0)
			return usage("forkbomb: bad MAX");
	}
	if (!isolated_pidns()) {
		printf("forkbomb: refused-not-isolated\n");
		return 0;
	}
	int p[2];
	if (pipe(p) < 0) {
		report("forkbomb", -1, errno);
		return 0;
	}
	long count = 0;
	int err = 0;
	while (count < max) {
		pid_t pid = fork();
		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			char c;
			close(p[1]);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		count++;
	}
	close(p[1]);
	close(p[0]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (err)
		printf("forkbomb: %s count=%ld\n", errname(err), count);
	else
		printf("forkbomb: ok count=%ld\n", count);
	fflush(stdout);
	return 0;
}

/* allocate and touch MB mebibytes, one at a time; progress on stderr */
static int v_memhog(VERB_ARGS)
{
	int ok;
	if (argc < 1)
		return usage("memhog MB");
	long mb = parse_long(argv[0], &ok);
	if (!ok || mb <= 0)
		return usage("memhog: bad MB");
	long got = 0;
	long pg = sysconf(_SC_PAGESIZE);
	for (; got < mb; got++) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED) {
			printf("memhog: %s got=%ld\n", errname(errno), got);
			return 0;
		}
		for (long off = 0; off < (1 << 20); off += pg)
			m[off] = (char)off | 1;
		if (got % 256 == 0)
			fprintf(stderr, "memhog: %ld MB\n", got);
	}
	printf("memhog: ok got=%ld\n", got);
	return 0;
}

/* ---- filesystem, fds, env ------------------------------------------------------------------ */

static int v_fds(VERB_ARGS)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		report("fds", -1, errno);
		return 0;
	}
	int self = dirfd(d);
	int list[1024];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 1024) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		if (fd == self)
			continue;
		list[n++] = fd;
	}
	/* sort (few entries) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && list[j - 1] > list[j]; j--) {
			int t = list[j];
			list[j] = list[j - 1];
			list[j - 1] = t;
		}
	printf("fds:");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : " ", list[i]);
	printf("\n");
	for (int i = 0; i < n; i++) {
		char path[64], target[PATH_MAX];
		snprintf(path, sizeof path, "/proc/self/fd/%d", list[i]);
		ssize_t l = readlink(path, target, sizeof target - 1);
		target[l < 0 ? 0 : l] = '\0';
		printf("fd %d -> %s\n", list[i], target);
	}
	closedir(d);
	return 0;
}

static int v_write(VERB_ARGS)
{
	if (argc < 1)
		return usage("write FILE [DATA]");
	const char *data = argc >= 2 ? argv[1] : "mxc-test-helper\n";
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		report("write", -1, errno);
		return 0;
	}
	size_t len = strlen(data);
	errno = 0;
	ssize_t w = write(fd, data, len);
	int e = errno;
	if (w >= 0 && (size_t)w != len) {
		w = -1;
		e = EIO;
	}
	if (close(fd) < 0 && w >= 0) {
		w = -1;
		e = errno;
	}
	report("write", w, e);
	return 0;
}

static int v_read(VERB_ARGS)
{
	if (argc < 1)
		return usage("read FILE");
	int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		report("read", -1, errno);
		return 0;
	}
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0) {
		report("read", -1, errno);
		close(fd);
		return 0;
	}
	close(fd);
	printf("read: ok\n");
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

static int v_write_exe(VERB_ARGS)
{
	TRY("write_exe", open(argc >= 1 ? argv[0] : "/proc/self/exe", O_WRONLY | O_CLOEXEC));
	return 0;
}

static int v_mknod(VERB_ARGS)
{
	TRY("mknod", mknod(argc >= 1 ? argv[0] : "/tmp/mxc-mem", S_IFCHR | 0600, makedev(1, 1)));
	return 0;
}

static int v_status(VERB_ARGS)
{
	static const char *keys[] = {"Uid:",    "Gid:",        "CapInh:", "CapPrm:",        "CapEff:",
				     "CapBnd:", "CapAmb:",     "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"};
	FILE *f = fopen("/proc/self/status", "r");
	if (!f) {
		report("status", -1, errno);
		return 0;
	}
	char line[512];
	printf("status: ok\n");
	while (fgets(line, sizeof line, f))
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
	fclose(f);
	return 0;
}

static int v_env(VERB_ARGS)
{
	extern char **environ;
	printf("env: ok\n");
	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}

/* ---- seccomp odds and ends ------------------------------------------------------------------ */

static int v_kexec_load(VERB_ARGS)
{
	TRY("kexec_load", syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL));
	return 0;
}

static int v_init_module(VERB_ARGS)
{
	TRY("init_module", syscall(SYS_init_module, NULL, 0UL, ""));
	return 0;
}

static int v_finit_module(VERB_ARGS)
{
	TRY("finit_module", syscall(SYS_finit_module, 0, "", 0));
	return 0;
}

static int v_personality(VERB_ARGS)
{
	errno = 0;
	int old = personality(PER_LINUX32);
	int e = errno;
	if (old == -1) {
		report("personality", -1, e);
		return 0;
	}
	int now = personality(0xffffffff);
	if ((now & PER_MASK) == PER_LINUX32)
		printf("personality: ok\n");
	else
		printf("personality: ignored\n");
	personality((unsigned long)old);
	return 0;
}

static int v_open_by_handle_at(VERB_ARGS)
{
	struct {
		unsigned int handle_bytes;
		int handle_type;
		unsigned char f_handle[128];
	} h;
	memset(&h, 0, sizeof h);
	h.handle_bytes = 8;
	h.handle_type = 1;
	TRY("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, &h, O_RDONLY));
	return 0;
}

static int v_acct(VERB_ARGS)
{
	TRY("acct", syscall(SYS_acct, NULL));
	return 0;
}

static int v_swapon(VERB_ARGS)
{
	TRY("swapon", syscall(SYS_swapon, "/tmp/mxc-swap", 0));
	return 0;
}

static int v_reboot(VERB_ARGS)
{
	/* LINUX_REBOOT_CMD_CAD_OFF: harmless even if it were allowed */
	TRY("reboot", syscall(SYS_reboot, 0xfee1dead, 672274793, 0, NULL));
	return 0;
}

static int v_x32_getpid(VERB_ARGS)
{
#if defined(__x86_64__)
	TRY("x32_getpid", syscall(39 | 0x40000000));
#else
	printf("x32_getpid: n/a\n");
#endif
	return 0;
}

/* connect to the abstract unix socket @NAME */
static int v_connect_abstract(VERB_ARGS)
{
	if (argc < 1)
		return usage("connect_abstract NAME");
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	size_t n = strlen(argv[0]);
	if (n + 1 > sizeof sa.sun_path)
		return usage("connect_abstract: NAME too long");
	memcpy(sa.sun_path + 1, argv[0], n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		report("connect_abstract", -1, errno);
		return 0;
	}
	TRY("connect_abstract", connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	close(fd);
	return 0;
}

static int v_unknown_syscall(VERB_ARGS)
{
	TRY("unknown_syscall", syscall(1023));
	return 0;
}

/* mseal(2), Linux 6.10: newer than the build's syscall table (libseccomp
 * 2.5.4 names up to 456), so the sandbox answers ENOSYS; a 6.10+ host
 * kernel answers EINVAL (flags must be 0). */
static int v_new_syscall(VERB_ARGS)
{
#if defined(__x86_64__)
	TRY("new_syscall", syscall(462, 0, 0, 1));
#else
	printf("new_syscall: n/a\n");
#endif
	return 0;
}

/* ---- network --------------------------------------------------------------------------------- */

static int v_connect(VERB_ARGS)
{
	int ok;
	if (argc < 2)
		return usage("connect HOST PORT");
	long port = parse_long(argv[1], &ok);
	if (!ok || port <= 0 || port > 65535)
		return usage("connect: bad port");
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, argv[0], &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		sl = sizeof *s4;
	} else if (inet_pton(AF_INET6, argv[0], &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		sl = sizeof *s6;
	} else {
		return usage("connect: HOST must be a numeric address");
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		report("connect", -1, errno);
		return 0;
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		if (errno != EINPROGRESS) {
			report("connect", -1, errno);
			return 0;
		}
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		int pr = poll(&pfd, 1, 5000);
		if (pr == 0) {
			report("connect", -1, ETIMEDOUT);
			return 0;
		}
		int soerr = 0;
		socklen_t el = sizeof soerr;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
		if (soerr) {
			report("connect", -1, soerr);
			return 0;
		}
	}
	/* read what the server says first, if anything, within a second */
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char buf[256];
	ssize_t n = 0;
	if (poll(&pfd, 1, 1000) > 0)
		n = read(fd, buf, sizeof buf - 1);
	printf("connect: ok\n");
	if (n > 0) {
		buf[n] = '\0';
		printf("%s\n", buf);
	}
	close(fd);
	return 0;
}

static int v_socket(VERB_ARGS)
{
	if (argc < 1)
		return usage("socket raw|packet|udp|icmp");
	if (strcmp(argv[0], "raw") == 0)
		TRY("socket", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	else if (strcmp(argv[0], "packet") == 0)
		TRY("socket", socket(AF_PACKET, SOCK_RAW, htons(3 /* ETH_P_ALL */)));
	else if (strcmp(argv[0], "udp") == 0)
		TRY("socket", socket(AF_INET, SOCK_DGRAM, 0));
	else if (strcmp(argv[0], "icmp") == 0) /* an ICMP echo socket: net.ipv4.ping_group_range */
		TRY("socket", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	else
		return usage("socket: unknown kind");
	return 0;
}

/* ---- adversary: setuid planting, per-user limits, setup races, /proc scanning ---------------- */

/* setid DIR: every way to create or change a file in DIR so that it carries setuid/setgid,
 * each reported as "setid_<call>: RESULT"; a plain chmod that must still work; and
 * "setid_scan: none" unless some file in DIR ended up with S_ISUID/S_ISGID. */
static int v_setid(VERB_ARGS)
{
	if (argc < 1)
		return usage("setid DIR");
	char p[PATH_MAX];
#define AT(name) (snprintf(p, sizeof p, "%s/%s", argv[0], name), p)
	int fd = open(AT("a"), O_CREAT | O_WRONLY, 0755);
	if (fd < 0) {
		printf("setid: %s\n", errname(errno));
		return 0;
	}
	TRY("setid_chmod", chmod(AT("a"), 04755));
	TRY("setid_fchmod", fchmod(fd, 02755));
	TRY("setid_fchmodat", fchmodat(AT_FDCWD, AT("a"), 06755, 0));
	TRY("setid_fchmodat2", syscall(452 /* fchmodat2 */, AT_FDCWD, AT("a"), 04755, 0));
	TRY("chmod_plain", chmod(AT("a"), 0700));
	close(fd);
	TRY("setid_open", open(AT("b"), O_CREAT | O_WRONLY, 04755));
	TRY("setid_openat", openat(AT_FDCWD, AT("c"), O_CREAT | O_WRONLY, 02755));
	TRY("setid_creat", creat(AT("d"), 04755));
	TRY("setid_mknod", mknod(AT("e"), S_IFREG | 04755, 0));
	TRY("setid_mknodat", mknodat(AT_FDCWD, AT("e2"), S_IFREG | 02755, 0));
	TRY("setid_mkdir", mkdir(AT("f"), 02755));
	TRY("setid_tmpfile", open(argv[0], O_TMPFILE | O_WRONLY, 04755));
	struct open_how how = {.flags = O_CREAT | O_WRONLY, .mode = 04755};
	TRY("setid_openat2", syscall(SYS_openat2, AT_FDCWD, AT("g"), &how, sizeof how));
#undef AT
	DIR *d = opendir(argv[0]);
	struct dirent *de;
	int found = 0;
	while (d && (de = readdir(d))) {
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", argv[0], de->d_name);
		if (de->d_name[0] != '.' && lstat(p, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
			printf("setid_scan: %s %o\n", de->d_name, st.st_mode & 07777);
			found = 1;
		}
	}
	if (d)
		closedir(d);
	if (!found)
		printf("setid_scan: none\n");
	return 0;
}

/* fcaps FILE DIR: every xattr that could make FILE privileged on the host — security.capability
 * as a v2 and as a v3 vfs_cap_data (cap_setuid,cap_setgid effective; the v3's rootid 0), a
 * trusted.* name — each "fcaps_<what>: RESULT"; then ACLs, which an owner may set: an access ACL
 * on FILE granting uid 65534 rwx and a default ACL on DIR, a file created under it, and the mode
 * bits each left ("acl_mode: FILE OCTAL", "acl_child_mode: OCTAL"); last "fcaps_scan: none"
 * unless FILE carries a security.capability. */
static int v_fcaps(VERB_ARGS)
{
	if (argc < 2)
		return usage("fcaps FILE DIR");
	const uint32_t caps = (1u << 6) | (1u << 7); /* CAP_SETGID, CAP_SETUID */
	const uint32_t v2[5] = {0x02000000u | 1u, caps, 0, 0, 0};
	const uint32_t v3[6] = {0x03000000u | 1u, caps, 0, 0, 0, 0 /* rootid */};
	TRY("fcaps_v2", setxattr(argv[0], "security.capability", v2, sizeof v2, 0));
	removexattr(argv[0], "security.capability");
	TRY("fcaps_v3", setxattr(argv[0], "security.capability", v3, sizeof v3, 0));
	TRY("fcaps_trusted", setxattr(argv[0], "trusted.mxc", "x", 1, 0));
	/* posix_acl_xattr: a version, then {tag, perm, id} sorted by tag */
	struct __attribute__((packed)) { uint16_t tag, perm; uint32_t id; } ent[5] = {
		{0x01, 7, ~0u}, {0x02, 7, 65534}, {0x04, 5, ~0u}, {0x10, 7, ~0u}, {0x20, 5, ~0u}};
	unsigned char acl[4 + sizeof ent];
	const uint32_t version = 2;
	memcpy(acl, &version, 4);
	memcpy(acl + 4, ent, sizeof ent);
	TRY("acl_access", setxattr(argv[0], "system.posix_acl_access", acl, sizeof acl, 0));
	struct stat st;
	if (stat(argv[0], &st) == 0)
		printf("acl_mode: %o\n", (unsigned)(st.st_mode & 07777));
	TRY("acl_default", setxattr(argv[1], "system.posix_acl_default", acl, sizeof acl, 0));
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/child", argv[1]);
	int fd = open(p, O_CREAT | O_WRONLY, 0777);
	if (fd >= 0 && fstat(fd, &st) == 0)
		printf("acl_child_mode: %o\n", (unsigned)(st.st_mode & 07777));
	if (fd >= 0)
		close(fd);
	char buf[64];
	printf("fcaps_scan: %s\n", getxattr(argv[0], "security.capability", buf, sizeof buf) < 0 ? "none" : "present");
	return 0;
}

/* inotify_hold FILE: inotify instances until refused ("inotify_hold: EMFILE count=N"), then
 * FILE is created and they are held until FILE is removed (bounded: 60 s). */
static int v_inotify_hold(VERB_ARGS)
{
	if (argc < 1)
		return usage("inotify_hold FILE");
	int n = 0, err = 0;
	for (; n < 100000; n++)
		if (inotify_init1(IN_CLOEXEC) < 0) {
			err = errno;
			break;
		}
	printf("inotify_hold: %s count=%d\n", err ? errname(err) : "ok", n);
	int fd = open(argv[0], O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 600 && access(argv[0], F_OK) == 0; i++)
		usleep(100000);
	return 0;
}

/* swaploop DIR SECONDS: exchanges DIR/x and DIR/x.alt (a directory and a symlink) as fast as
 * it can, for SECONDS ("swaploop: ok swaps=N") */
static int v_swaploop(VERB_ARGS)
{
	int ok;
	if (argc < 2)
		return usage("swaploop DIR SECONDS");
	long secs = parse_long(argv[1], &ok);
	char a[PATH_MAX], b[PATH_MAX];
	snprintf(a, sizeof a, "%s/x", argv[0]);
	snprintf(b, sizeof b, "%s/x.alt", argv[0]);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long n = 0;
	int err = 0;
	do {
		for (int i = 0; i < 64; i++, n++)
			if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) < 0) {
				err = errno;
				break;
			}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!err && t.tv_sec - t0.tv_sec < secs);
	printf("swaploop: %s swaps=%ld\n", err ? errname(err) : "ok", n);
	return 0;
}

static int read_all_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return (int)n;
}

/* scan_proc SECONDS OUT NEEDLES: for SECONDS, reads /proc/PID/{cmdline,environ} of every other
 * process it can see; each one holding a line of the file NEEDLES is appended to OUT (the
 * needles come from a file so that no process's own argv or environment holds them).
 * Reports "scan_proc: ok rounds=N pids=P hits=H" (P: distinct other pids ever seen) */
static int v_scan_proc(VERB_ARGS)
{
	int ok;
	if (argc < 3)
		return usage("scan_proc SECONDS OUT NEEDLES");
	long secs = parse_long(argv[0], &ok);
	static char buf[1 << 16], needles[4096];
	if (read_all_file(argv[2], needles, sizeof needles) < 0) {
		printf("scan_proc: %s\n", errname(errno));
		return 0;
	}
	char *needle[16];
	int nn = 0;
	for (char *tok = strtok(needles, "\n"); tok && nn < 16; tok = strtok(NULL, "\n"))
		if (*tok)
			needle[nn++] = tok;
	static int seen[4096];
	int nseen = 0, hits = 0;
	long rounds = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t self = getpid();
	do {
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			int pid = atoi(de->d_name);
			if (pid <= 0 || pid == self)
				continue;
			int known = 0;
			for (int i = 0; i < nseen && !known; i++)
				known = seen[i] == pid;
			if (!known && nseen < 4096)
				seen[nseen++] = pid;
			const char *files[] = {"cmdline", "environ"};
			for (int f = 0; f < 2; f++) {
				char path[64];
				snprintf(path, sizeof path, "/proc/%d/%s", pid, files[f]);
				if (read_all_file(path, buf, sizeof buf) <= 0)
					continue;
				for (int k = 0; k < nn; k++) {
					if (!strstr(buf, needle[k]))
						continue;
					FILE *o = fopen(argv[1], "a");
					if (o) {
						fprintf(o, "%d %s %.300s\n", pid, files[f], buf);
						fclose(o);
					}
					hits++;
					break;
				}
			}
		}
		if (d)
			closedir(d);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < secs);
	printf("scan_proc: ok rounds=%ld pids=%d hits=%d\n", rounds, nseen, hits);
	return 0;
}

/* memtricks MB: the ways past RLIMIT_DATA, each allocating and touching MB megabytes:
 * "memtricks_shared: RESULT", "memtricks_memfd: RESULT", "memtricks_growsdown: RESULT" */
static int v_memtricks(VERB_ARGS)
{
	int ok;
	if (argc < 1)
		return usage("memtricks MB");
	size_t len = (size_t)parse_long(argv[0], &ok) << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
	}
	report("memtricks_shared", p == MAP_FAILED ? -1 : 0, errno);
	int fd = memfd_create("hog", 0);
	int err = errno;
	if (fd >= 0) {
		err = 0;
		if (ftruncate(fd, (off_t)len) < 0)
			err = errno;
		char *m = err ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (!err && m == MAP_FAILED)
			err = errno;
		if (m != MAP_FAILED) {
			for (size_t i = 0; i < len; i += 4096)
				m[i] = 1;
			munmap(m, len);
		}
		close(fd);
	}
	report("memtricks_memfd", err ? -1 : 0, err);
	char *g = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
	if (g != MAP_FAILED) {
		for (size_t i = 0; i < len; i += 4096)
			g[i] = 1;
		munmap(g, len);
	}
	report("memtricks_growsdown", g == MAP_FAILED ? -1 : 0, errno);
	return 0;
}

/* ipctricks N MB: the kernel's other allocators, outside RLIMIT_AS: N SysV shared memory
 * segments of MB megabytes each made, attached, touched and detached with no IPC_RMID (they
 * stay, held by the IPC namespace), a SysV message queue, a semaphore set, and POSIX message
 * queues opened with the default size until refused:
 * "ipctricks_shmget: RESULT made=K", "ipctricks_msgget: RESULT", "ipctricks_semget: RESULT",
 * "ipctricks_mq: WHY queues=Q bytes=B" (B = what the queues may hold, WHY the refusal) */
static int v_ipctricks(VERB_ARGS)
{
	int ok;
	if (argc < 2)
		return usage("ipctricks N MB");
	long n = parse_long(argv[0], &ok);
	size_t len = (size_t)parse_long(argv[1], &ok) << 20;
	long made = 0;
	int err = 0;
	for (; made < n; made++) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (id < 0) {
			err = errno;
			break;
		}
		char *p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			err = errno;
			break;
		}
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		shmdt(p);
	}
	printf("ipctricks_shmget: %s made=%ld\n", err ? errname(err) : "ok", made);
	long rc = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	report("ipctricks_msgget", rc, errno);
	rc = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	report("ipctricks_semget", rc, errno);
	struct mq_attr_k { long flags, maxmsg, msgsize, curmsgs, pad[4]; } a = {0};
	long q = 0, bytes = 0;
	err = 0;
	for (; q < 1024; q++) {
		char name[32];
		snprintf(name, sizeof name, "mxc-ipctricks-%ld", q);
		long fd = syscall(SYS_mq_open, name, O_CREAT | O_RDWR, 0600, NULL);
		if (fd < 0) {
			err = errno;
			break;
		}
		if (syscall(SYS_mq_getsetattr, (int)fd, NULL, &a) == 0)
			bytes += a.maxmsg * a.msgsize;
	}
	printf("ipctricks_mq: %s queues=%ld bytes=%ld\n", err ? errname(err) : "ok", q, bytes);
	fflush(stdout);
	return 0;
}

/* ---- misc --------------------------------------------------------------------------------- */

/* wait_file PATH [TENTHS]: wait (bounded, default 30 s) until PATH exists */
static int v_wait_file(VERB_ARGS)
{
	int ok;
	if (argc < 1)
		return usage("wait_file PATH [TENTHS]");
	long tenths = argc >= 2 ? parse_long(argv[1], &ok) : 300;
	for (long i = 0; i < tenths; i++) {
		if (access(argv[0], F_OK) == 0) {
			printf("wait_file: ok\n");
			return 0;
		}
		usleep(100000);
	}
	printf("wait_file: ETIMEDOUT\n");
	return 0;
}

/* mmapw [-u] PATH...: each file opened O_RDWR (with -u: O_RDONLY, mapped PROT_READ and upgraded
 * by mprotect) and 8 bytes at offset 64 rewritten through a MAP_SHARED mapping (the page-fault
 * write that keeps set-id bits and file capabilities).  "mmapw:PATH: RESULT" each */
static int v_mmapw(VERB_ARGS)
{
	int up = argc > 0 && !strcmp(argv[0], "-u");
	for (int i = up ? 1 : 0; i < argc; i++) {
		char verb[4200];
		snprintf(verb, sizeof verb, "mmapw:%s", argv[i]);
		int fd = open(argv[i], (up ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		int err = errno;
		char *m = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, up ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (fd >= 0 && m == MAP_FAILED)
			err = errno;
		if (m != MAP_FAILED && up && mprotect(m, 4096, PROT_READ | PROT_WRITE) < 0) {
			err = errno;
			munmap(m, 4096);
			m = MAP_FAILED;
		}
		if (m != MAP_FAILED) {
			memcpy(m + 64, "MMAPPWN!", 8);
			msync(m, 4096, MS_SYNC);
			munmap(m, 4096);
		}
		if (fd >= 0)
			close(fd);
		report(verb, m == MAP_FAILED ? -1 : 0, err);
	}
	return 0;
}

static int v_pid(VERB_ARGS)
{
	printf("pid: ok %d ppid=%d uid=%d gid=%d\n", (int)getpid(), (int)getppid(), (int)getuid(),
	       (int)getgid());
	return 0;
}

typedef int (*verb_fn)(int, char **);
static const struct {
	const char *name;
	verb_fn fn;
} verbs[] = {
	{"tiocsti", v_tiocsti},
	{"mmapw", v_mmapw},
	{"tiocsti_hibits", v_tiocsti_hibits},
	{"tioclinux", v_tioclinux},
	{"devtty", v_devtty},
	{"keyctl", v_keyctl},
	{"add_key", v_add_key},
	{"request_key", v_request_key},
	{"bpf", v_bpf},
	{"perf_event_open", v_perf_event_open},
	{"userfaultfd", v_userfaultfd},
	{"io_uring_setup", v_io_uring_setup},
	{"unshare_user", v_unshare_user},
	{"unshare", v_unshare},
	{"clone3_newuser", v_clone3_newuser},
	{"clone_newuser", v_clone_newuser},
	{"setns", v_setns},
	{"mount_tmpfs", v_mount_tmpfs},
	{"mount_proc", v_mount_proc},
	{"umount", v_umount},
	{"fsopen", v_fsopen},
	{"open_tree", v_open_tree},
	{"pivot_root", v_pivot_root},
	{"chroot_escape", v_chroot_escape},
	{"dotdot", v_dotdot},
	{"ptrace_attach", v_ptrace_attach},
	{"kill", v_kill},
	{"pidfd_open", v_pidfd_open},
	{"process_vm_readv", v_process_vm_readv},
	{"forkbomb", v_forkbomb},
	{"memhog", v_memhog},
	{"fds", v_fds},
	{"write", v_write},
	{"read", v_read},
	{"write_exe", v_write_exe},
	{"mknod", v_mknod},
	{"status", v_status},
	{"env", v_env},
	{"kexec_load", v_kexec_load},
	{"init_module", v_init_module},
	{"finit_module", v_finit_module},
	{"personality", v_personality},
	{"open_by_handle_at", v_open_by_handle_at},
	{"acct", v_acct},
	{"swapon", v_swapon},
	{"reboot", v_reboot},
	{"x32_getpid", v_x32_getpid},
	{"connect_abstract", v_connect_abstract},
	{"unknown_syscall", v_unknown_syscall},
	{"new_syscall", v_new_syscall},
	{"connect", v_connect},
	{"socket", v_socket},
	{"wait_file", v_wait_file},
	{"pid", v_pid},
	{"setid", v_setid},
	{"fcaps", v_fcaps},
	{"inotify_hold", v_inotify_hold},
	{"swaploop", v_swaploop},
	{"scan_proc", v_scan_proc},
	{"memtricks", v_memtricks},
	{"ipctricks", v_ipctricks},
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mxc-test-helper VERB [ARGS...]\nverbs:");
		for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
			fprintf(stderr, " %s", verbs[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* verbs that would harm a host if the runtime failed to isolate us */
	static const char *const host_harmful[] = {"mount_tmpfs", "mount_proc", "umount",
						   "pivot_root", "setns", "swapon", "reboot",
						   "kexec_load", "acct", "chroot_escape", "setid", "fcaps",
						   "inotify_hold"};
	int harmful = 0;
	for (size_t i = 0; i < sizeof host_harmful / sizeof host_harmful[0]; i++)
		if (strcmp(argv[1], host_harmful[i]) == 0)
			harmful = 1;
	if (strcmp(argv[1], "write") == 0 && argc >= 3 &&
	    (strncmp(argv[2], "/proc", 5) == 0 || strncmp(argv[2], "/sys", 4) == 0))
		harmful = 1;
	if (harmful && !isolated_pidns()) {
		printf("%s: refused-not-isolated\n", argv[1]);
		return 0;
	}
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return verbs[i].fn(argc - 2, argv + 2);
	return usage("unknown verb");
}
