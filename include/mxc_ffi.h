/* mxc_ffi.h — the ABI of libmxc_ffi.so: upstream MXC 1.0.1's native library,
 * the one @microsoft/mxc-sdk 1.0 loads (MXC_FFI_DIR), implemented over
 * libmxc's engine.
 *
 * Conventions (as upstream's): requests are NUL-terminated UTF-8 JSON in
 * contract 0.9.0-alpha, 1.0.0 or 1.1.0-alpha; every out-parameter is reset
 * first; a status is 0 or a wire error code number (1 malformed_request ...
 * 12 backend_error) or 100 NULL argument, 101 not UTF-8, 102 internal;
 * every returned string is the caller's, freed with mxc_string_free or the
 * owning result's free function (which free by the field values: they may
 * receive a copy of the struct).  mxc_version's string is static. */
#ifndef MXC_FFI_H
#define MXC_FFI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXC_STATUS_SUCCESS 0
#define MXC_STATUS_NULL_ARGUMENT 100
#define MXC_STATUS_INVALID_UTF8 101
#define MXC_STATUS_INTERNAL 102

typedef struct MxcErrorDetail {
    char *message_utf8; /* NULL = not supplied */
    char *operation_utf8;
    char *native_code_utf8;
    char *remediation_utf8;
} MxcErrorDetail;

typedef struct MxcRunResult {
    int32_t status;
    int32_t exit_code; /* -1 on timeout or kill */
    int32_t timed_out;
    char *stdout_utf8; /* lossy UTF-8 (invalid bytes and NUL become U+FFFD) */
    char *stderr_utf8;
    MxcErrorDetail error;
    char *output_metadata_json_utf8;
    char *warnings_json_utf8;
} MxcRunResult;

typedef struct MxcStateAwareResult {
    int32_t status;
    char *response_json_utf8; /* {"result":...} */
    MxcErrorDetail error;
} MxcStateAwareResult;

typedef struct MxcNativeStdio {
    intptr_t stdin_handle; /* fds; -1 = absent */
    intptr_t stdout_handle;
    intptr_t stderr_handle;
} MxcNativeStdio;

typedef struct MxcExecOutcome {
    int32_t timed_out;
    int32_t exit_code;
} MxcExecOutcome;

typedef struct MxcSandbox MxcSandbox;
typedef struct MxcReadStream MxcReadStream;
typedef struct MxcWriteStream MxcWriteStream;
typedef struct MxcStreamCloser MxcStreamCloser;

/* version, platform, backends */
const char *mxc_version(void);
char *mxc_available_backends_json(void);
char *mxc_platform_support_json(void);
void mxc_string_free(char *s);
void mxc_error_detail_free(MxcErrorDetail *detail);

/* one-shot */
int32_t mxc_run_json(const char *request_json_utf8, int32_t experimental, MxcRunResult *out);
void mxc_run_result_free(MxcRunResult *r);
int32_t mxc_spawn_json(const char *request_json_utf8, int32_t experimental, MxcSandbox **out_handle,
                       MxcErrorDetail *out_error);
int32_t mxc_spawn_pty_json(const char *request_json_utf8, int32_t experimental, uint16_t rows, uint16_t cols,
                           MxcSandbox **out_handle, MxcErrorDetail *out_error);

/* a running workload */
uint32_t mxc_sandbox_id(MxcSandbox *handle);
int32_t mxc_sandbox_take_native_stdio(MxcSandbox *handle, MxcNativeStdio *out_stdio);
void mxc_native_pipe_close(intptr_t handle);
int32_t mxc_sandbox_try_wait(MxcSandbox *handle, int32_t *out_exit, int32_t *out_running, int32_t *out_timed_out);
int32_t mxc_sandbox_wait(MxcSandbox *handle, int32_t *out_exit, int32_t *out_timed_out);
int32_t mxc_sandbox_kill(MxcSandbox *handle);
int32_t mxc_sandbox_kill_for_timeout(MxcSandbox *handle);
int32_t mxc_sandbox_warnings_json(MxcSandbox *handle, char **out_json_utf8);
int32_t mxc_sandbox_output_metadata_json(MxcSandbox *handle, char **out_json_utf8);
int32_t mxc_sandbox_pty_resize(MxcSandbox *handle, uint16_t rows, uint16_t cols);
void mxc_sandbox_free(MxcSandbox *handle);

/* stream objects (the C# SDK's path) */
MxcWriteStream *mxc_sandbox_take_stdin(MxcSandbox *handle);
MxcReadStream *mxc_sandbox_take_stdout(MxcSandbox *handle);
MxcReadStream *mxc_sandbox_take_stderr(MxcSandbox *handle);
int32_t mxc_stream_read(MxcReadStream *stream, uint8_t *buf, size_t cap, size_t *out_read);
int32_t mxc_stream_write(MxcWriteStream *stream, const uint8_t *buf, size_t len, size_t *out_written);
int32_t mxc_stream_flush(MxcWriteStream *stream);
void mxc_read_stream_free(MxcReadStream *stream);
void mxc_write_stream_free(MxcWriteStream *stream);
MxcStreamCloser *mxc_sandbox_stdout_closer(MxcSandbox *handle);
MxcStreamCloser *mxc_sandbox_stderr_closer(MxcSandbox *handle);
int32_t mxc_stream_closer_close(MxcStreamCloser *closer);
void mxc_stream_closer_free(MxcStreamCloser *closer);

/* state-aware lifecycle */
int32_t mxc_run_state_aware_json(const char *request_json_utf8, int32_t dry_run, int32_t experimental,
                                 MxcStateAwareResult *out);
void mxc_state_aware_result_free(MxcStateAwareResult *r);
int32_t mxc_exec_state_aware_json(const char *request_json_utf8, int32_t experimental, MxcSandbox **out_handle,
                                  MxcErrorDetail *out_error);
int32_t mxc_state_aware_exec_pty(const char *request_json_utf8, int32_t experimental, uint16_t rows, uint16_t cols,
                                 MxcSandbox **out_handle, MxcErrorDetail *out_error);
int32_t mxc_run_state_aware_exec_json(const char *request_json_utf8, int32_t experimental, MxcRunResult *out);
int32_t mxc_exec_state_aware_attached_json(const char *request_json_utf8, int32_t experimental,
                                           MxcExecOutcome *out_outcome, MxcErrorDetail *out_error);

/* telemetry consent: mxc collects no telemetry, so every answer is
 * "not-applicable" and no prompt is ever needed */
int32_t mxc_telemetry_get_consent(char **out_utf8);
int32_t mxc_telemetry_get_policy(char **out_utf8);
int32_t mxc_telemetry_get_consent_status(char **out_utf8);
int32_t mxc_telemetry_withdraw_consent(char **out_utf8);
int32_t mxc_telemetry_request_consent(const char *locale_utf8, int32_t (*presenter)(const char *prompt_json, void *ctx),
                                      void *context, char **out_utf8);
int32_t mxc_telemetry_needs_consent_prompt(int32_t *out_needs_prompt);

#ifdef __cplusplus
}
#endif
#endif
