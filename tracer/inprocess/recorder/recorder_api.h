/* SPDX-License-Identifier: MIT */
/* What the server calls in libhindsight-recorder.so once it has loaded it into the program.
 * The server and the library must agree on the version: a server finding another refuses to
 * record with it. */
#ifndef HINDSIGHT_RECORDER_API_H
#define HINDSIGHT_RECORDER_API_H

#define HS_RECORDER_ABI_VERSION 1u
#define HS_RECORDER_LIBRARY "libhindsight-recorder.so"

#ifdef __cplusplus
extern "C" {
#endif

unsigned hs_recorder_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif
