package io.cosched.http.client;

import io.netty.buffer.ByteBuf;
import java.io.IOException;

/**
 * What an asynchronous exchange ({@link LoopHttpClient#start}) tells its caller, always on the event
 * loop of the exchange's connection, one call at a time: the head of the final answer, then the body
 * as it is {@link LoopExchange#demand demanded}, then its end; or a failure instead. Nothing is told
 * after {@link LoopExchange#cancel()}.
 */
public interface ExchangeHandler {

    /** The final answer's head arrived (redirects followed, 1xx skipped): see its status and headers on {@code exchange}. */
    void onResponse(LoopExchange exchange);

    /** A piece of the body, never more pieces than demanded; the handler's to release. */
    void onContent(ByteBuf content);

    /** The body has ended; the connection is back in its loop's connection pool (or closed). */
    void onEnd();

    /**
     * The exchange failed, before the head or in the body: as {@link LoopHttpClient#exchange} would
     * throw it (a connect or read timeout, a refused connection, TLS, a server that closed the
     * connection early, an answer that is not HTTP). The connection is closed.
     */
    void onError(IOException error);
}
