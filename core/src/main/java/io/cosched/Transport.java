package io.cosched;

/** The I/O transport of an {@link IOManager}'s event loops. */
public enum Transport {
    /** Epoll when Netty's native epoll transport is available, else NIO. */
    AUTO,
    /** Linux epoll through Netty's native transport; failing to start when it is unavailable. */
    EPOLL,
    /** Java NIO selectors: works everywhere. */
    NIO
}
