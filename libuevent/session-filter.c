/* session-filter.c - which of a session's decoded records its reader gets (the options'
 * say), and the stats they count. */
#include "config.h"

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "session-internal.h"

/* Whether rec (of event kind) goes to the reader: 1, or 0 to skip it; counted. */
int _uevent_session_keep(struct uevent_session *s, const struct uevent_perf_record *rec,
			 int kind)
{
	switch (rec->type) {
	case PERF_RECORD_LOST:
		s->st.lost += rec->u.lost.lost;
		s->st.lost_records++;
		return 1;
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost_samples += rec->u.lost.lost;
		s->st.lost_records++;
		return 1;
	case PERF_RECORD_UEVENT:
		if (rec->u.uevent.flags & UEVENT_RECORD_TRUNCATED)
			s->st.truncated++;
		s->st.uevents++;
		return 1;
	case PERF_RECORD_SAMPLE:
		s->st.samples += kind == K_SAMPLES;
		return kind == K_SAMPLES || (s->o.flags & UEVENT_SESSION_ALL_RECORDS);
	default:
		s->st.bpf_events += rec->type == PERF_RECORD_BPF_EVENT;
		return !!(s->o.flags & (UEVENT_SESSION_ALL_RECORDS |
					(rec->type == PERF_RECORD_BPF_EVENT ||
					 rec->type == PERF_RECORD_KSYMBOL ? UEVENT_SESSION_BPF_EVENTS : 0)));
	}
}
