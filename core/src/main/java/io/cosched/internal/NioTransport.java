package io.cosched.internal;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;

/** Java NIO selectors; available everywhere. */
final class NioTransport implements IoTransport {

    @Override
    public String name() {
        return "nio";
    }

    @Override
    public IoHandlerFactory handlerFactory() {
        return NioIoHandler.newFactory();
    }
}
