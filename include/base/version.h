/* SPDX-License-Identifier: Apache-2.0 */
/* version.h - the release number --version and the logs show. */
#ifndef STSD_VERSION_H
#define STSD_VERSION_H
#define STSD_VERSION "0.1.0"
#endif
