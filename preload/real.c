#include <dlfcn.h>
#include <stddef.h>

#include "preload/real.h"
#include "preload/shim.h"

#define REAL_NAME(name) #name,
static const char *const real_names[REAL_COUNT] = { REAL_LIST(REAL_NAME) };
#undef REAL_NAME

/* Written once per entry (a racing second resolution writes the same
 * value); read with relaxed atomics so that threads never see a torn
 * pointer.  In .data, not .bss: the loader has already copied the data
 * page (relocations) where a .bss page would be one more page fault in
 * every process the shim is loaded into (SHIM_HOT). */
static void *real_fns[REAL_COUNT] SHIM_HOT;

void real_init(void)
{
	for (int i = 0; i < REAL_COUNT; i++)
		if (!__atomic_load_n(&real_fns[i], __ATOMIC_RELAXED))
			__atomic_store_n(&real_fns[i], dlsym(RTLD_NEXT, real_names[i]),
					 __ATOMIC_RELAXED);
}

void *real_get(enum real_id id)
{
	void *f = __atomic_load_n(&real_fns[id], __ATOMIC_RELAXED);

	/* Only before the constructor ran (another library's constructor
	 * calling open): early, single-threaded start-up. */
	if (!f) {
		f = dlsym(RTLD_NEXT, real_names[id]);
		__atomic_store_n(&real_fns[id], f, __ATOMIC_RELAXED);
	}
	return f;
}
