package io.cosched.spring.web.server;

import io.cosched.IOManager;

/**
 * What every coroutine request of one {@link CoroutineRequests} is handed: the IOManager whose loops carry it and
 * whose timers keep its deadline, the admission that holds its in-flight slot, and the counters it reports to.
 */
record RequestServices(IOManager io, Admission admission, RequestCounters counts) {}
