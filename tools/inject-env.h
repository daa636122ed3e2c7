/* inject-env.h - `uevent record --nvtx/--itt`: the injection libraries named for CMD. */
#ifndef UEVENT_INJECT_ENV_H
#define UEVENT_INJECT_ENV_H

enum { CLI_INJECT_NVTX = 1, CLI_INJECT_ITT = 2 };

/*
 * Sets NVTX_INJECTION64_PATH (the one it held goes to UEVENT_NVTX_CHAIN) and/or
 * INTEL_LIBITTNOTIFY64 (to UEVENT_ITT_CHAIN) in this process's environment, for the
 * command it starts; 0, or -ENOENT after saying which library is missing.
 */
int cli_inject_env(unsigned int which);

#endif
