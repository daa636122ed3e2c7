/* itt.h - the ABI between Intel ITT's static part (compiled into each instrumented module:
 * oneTBB, oneDNN, OpenVINO) and a collector, as ittnotify.h and Intel's collector
 * protocol define it; our declarations, shared by libuevent-itt.so and its tests. */
#ifndef UEVENT_ITT_H
#define UEVENT_ITT_H

#include <pthread.h>
#include <stddef.h>

/* ittnotify.h's __itt_id, __itt_domain, __itt_string_handle (pack 8: natural here). */
struct itt_id {
	unsigned long long d1, d2, d3;
};

struct itt_domain {
	volatile int	flags;		/* 0: the static part's macros skip the calls */
	const char	*nameA;
	void		*nameW;
	int		extra1;
	void		*extra2;
	struct itt_domain *next;
};

struct itt_string_handle {
	const char	*strA;
	void		*strW;
	int		extra1;
	void		*extra2;
	struct itt_string_handle *next;
};

/* ittnotify_config.h's __itt_counter_info_t: a counter a static part made itself. */
struct itt_counter_info {
	const char	*nameA;
	void		*nameW;
	const char	*domainA;
	void		*domainW;
	int		type;
	long		index;
	int		extra1;
	void		*extra2;
	struct itt_counter_info *next;
};

/* One entry of the static part's API list: "__itt_" name and the slot it calls through. */
struct itt_api_info {
	const char	*name;
	void		**func_ptr;
	void		*init_func;
	void		*null_func;	/* what to leave in the slot for a call we lack */
	int		group;
};

/* The static part's global, handed to the collector's __itt_api_init (POSIX layout). */
struct itt_global {
	unsigned char	magic[8];
	unsigned long	version_major, version_minor, version_build;
	volatile long	api_initialized, mutex_initialized, atomic_counter;
	pthread_mutex_t	mutex;
	void		*lib;
	void		*error_handler;
	const char	**dll_path_ptr;
	struct itt_api_info *api_list_ptr;	/* ends with a NULL name */
	struct itt_global *next;
	void		*thread_list;
	struct itt_domain *domain_list;
	struct itt_string_handle *string_list;
	int		state;
	void		*counter_list;
	unsigned int	ipt_collect_events;
	void		*histogram_list;
	void		*counter_metadata_list;
};

enum {
	ITT_GROUP_ALL		= -1,
	ITT_METADATA_U64	= 1,
	ITT_METADATA_S64	= 2,
	ITT_METADATA_U32	= 3,
	ITT_METADATA_S32	= 4,
	ITT_METADATA_U16	= 5,
	ITT_METADATA_S16	= 6,
	ITT_METADATA_FLOAT	= 7,
	ITT_METADATA_DOUBLE	= 8,
};

typedef void (itt_api_init_fn)(struct itt_global *g, int groups);

#endif
