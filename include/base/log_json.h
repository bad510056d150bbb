/* log_json.h - stsd.log.format=json: log lines as JSON objects (time, level, event,
 * fields), for journald and log shippers. */
#ifndef STSD_LOG_JSON_H
#define STSD_LOG_JSON_H

#include "base/log.h"

/* on: from now on every log message is written as one JSON line; off: as text. */
void log_json_install(int on);

#endif
