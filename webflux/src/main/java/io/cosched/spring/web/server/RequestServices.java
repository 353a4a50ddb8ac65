package io.cosched.spring.web.server;

import io.cosched.IOManager;
import io.cosched.spring.web.stream.OpenStreams;

/**
 * What every coroutine request of one {@link CoroutineRequests} is handed: the IOManager whose loops carry it and
 * whose timers keep its deadline, the admission that holds its in-flight slot, the counters it reports to, and the
 * open streams the shutdown ends.
 */
record RequestServices(IOManager io, Admission admission, RequestCounters counts, OpenStreams streams) {}
