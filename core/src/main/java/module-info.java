/**
 * cosched's runtime. Only the API is exported: {@code io.cosched} (schedulers, coroutines, timers,
 * channels), {@code io.cosched.net} (blocking sockets on the loops) and {@code io.cosched.netty} (a
 * blocking face for Netty channels on the loops); the implementation in {@code io.cosched.internal} stays inside. On the class path, where Spring Boot
 * applications run, this descriptor is ignored and nothing changes.
 *
 * <p>Carrier mode reads the JDK's virtual-thread internals: on the module path start the JVM with
 * {@code --add-opens java.base/java.lang=io.cosched} (on the class path, {@code =ALL-UNNAMED}).
 */
module io.cosched {
    requires transitive io.netty.common;
    requires transitive io.netty.buffer;
    requires transitive io.netty.transport;
    requires io.netty.transport.classes.epoll;
    requires static transitive org.jspecify; // nullness annotations, checked at compile time
    requires java.management;
    requires static jdk.jfr; // Flight Recorder events, when the runtime has the module

    exports io.cosched;
    exports io.cosched.net;
    exports io.cosched.netty;
}
