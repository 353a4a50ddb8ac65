package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.jspecify.annotations.Nullable;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Hands a coroutine handler's result back to the event loop that read the request, so that Spring
 * writes the response there, as it does for a reactive handler.
 *
 * <p>Without this, everything after the handler (return value handling, encoding, the response
 * writes and the flush) runs in the handler's coroutine. Netty sees writes from a thread that is
 * not the loop (a coroutine is a virtual thread, even while it runs on the loop's thread) and turns
 * every one into a task on the loop's queue. One hop back, after the handler returned, replaces
 * them all. Exception handlers still run in the coroutine: they may block as well.
 *
 * <p>Only for handlers the {@link CoroutineHandlerSelector} picked, and only when the request is
 * dispatched on one of the IOManager's loops (a filter that went asynchronous may dispatch it
 * elsewhere; then nothing changes).
 */
final class LoopResultHandlerAdapter extends RequestMappingHandlerAdapter {

    private final CoroutineHandlerSelector selector;
    private final EventLoopGroup group;
    // the loops never change once the IOManager runs; filled on first use, then only read
    private volatile Map<EventExecutor, Scheduler> loops = Map.of();

    LoopResultHandlerAdapter(IOManager io, CoroutineHandlerSelector selector) {
        this.selector = selector;
        this.group = io.eventLoopGroup();
    }

    @Override
    public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
        Mono<HandlerResult> result = super.handle(exchange, handler);
        if (handler instanceof HandlerMethod method && selector.test(method)) {
            Scheduler loop = currentLoop();
            if (loop != null) {
                return result.publishOn(loop);
            }
        }
        return result;
    }

    /** The Reactor scheduler of the IOManager loop running this thread, or null on any other thread. */
    private @Nullable Scheduler currentLoop() {
        EventExecutor executor = ThreadExecutorMap.currentExecutor();
        if (executor == null) {
            return null;
        }
        Scheduler scheduler = loops.get(executor);
        if (scheduler == null && executor.parent() == group) {
            Map<EventExecutor, Scheduler> grown = new IdentityHashMap<>(loops);
            scheduler = Schedulers.fromExecutor(executor);
            grown.put(executor, scheduler);
            loops = grown; // a lost race only builds an equal scheduler twice
        }
        return scheduler;
    }
}
