/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * GET /v1/events as a server-sent-events stream (text/event-stream):
 *   id: <event id>\nevent: <type>\ndata: <event JSON>\n\n
 * plus ": keepalive" comments while idle. A client that reconnects with
 * Last-Event-ID gets every event after that id from the model's history
 * (mg_events_since) before the live ones, without gaps or duplicates.
 *
 * Each stream subscribes to the model; the callback queues events (a
 * bounded ring: a stream that falls behind re-reads the history instead of
 * growing without bound) and resumes the stream's connection, which is
 * suspended while there is nothing to send so it holds no MHD thread. A
 * hub thread resumes idle streams every heartbeat interval.
 *
 * Locks: hub->lock (the stream list) before stream->lock; neither is held
 * while calling into the model, except that the subscription callback
 * takes stream->lock (the model holds none of its own then).
 */
#ifndef VGMEM_MGMTD_SSE_H
#define VGMEM_MGMTD_SSE_H

#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "model.h"

#define SSE_QUEUE		256	/* events queued per stream */
#define SSE_HISTORY_PAGE	256	/* events read from history at once */
#define SSE_MAX_STREAMS		64
#define SSE_HEARTBEAT_MS	15000
#define SSE_RETRY_MS		2000	/* client reconnection delay we suggest */

struct sse_hub;

int sse_hub_create(struct mg *mg, unsigned int heartbeat_ms,
		   struct sse_hub **out);
void sse_hub_set_heartbeat(struct sse_hub *hub, unsigned int ms);
/* Ends every stream and refuses new ones; before MHD_stop_daemon(). */
void sse_hub_shutdown(struct sse_hub *hub);
/* After the MHD daemons are stopped (every stream freed). */
void sse_hub_destroy(struct sse_hub *hub);

/*
 * A response streaming events for conn: after after_id if resume, else
 * from now. NULL with *err = -EBUSY (too many streams), -ESHUTDOWN or
 * -ENOMEM.
 */
struct MHD_Response *sse_open(struct sse_hub *hub, struct MHD_Connection *conn,
			      bool resume, uint64_t after_id, int *err);

#endif /* VGMEM_MGMTD_SSE_H */
