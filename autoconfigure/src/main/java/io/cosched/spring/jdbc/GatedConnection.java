package io.cosched.spring.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The connection a borrower gets from {@link LoopBoundDataSource}: HikariCP's, which gives its turn
 * in the {@link LoopGate} back when it is closed or aborted, whatever became of the connection
 * (returned to the pool, or evicted as broken). Every other call goes straight to Hikari's.
 */
final class GatedConnection implements InvocationHandler {

    private static final Class<?>[] TYPES = {Connection.class};

    private final Connection connection;
    private final LoopGate gate;
    private final AtomicBoolean turnGiven = new AtomicBoolean();

    private GatedConnection(Connection connection, LoopGate gate) {
        this.connection = connection;
        this.gate = gate;
    }

    static Connection of(Connection connection, LoopGate gate) {
        return (Connection) Proxy.newProxyInstance(GatedConnection.class.getClassLoader(), TYPES,
                new GatedConnection(connection, gate));
    }

    /** Hikari's connection behind {@code c}, or {@code c} itself. */
    static Connection unwrap(Connection c) {
        return Proxy.isProxyClass(c.getClass()) && Proxy.getInvocationHandler(c) instanceof GatedConnection g
                ? g.connection : c;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        switch (method.getName()) {
            case "close", "abort" -> {
                try {
                    return call(method, args);
                } finally {
                    if (turnGiven.compareAndSet(false, true)) {
                        gate.exit(); // after Hikari has the connection back: the next borrower finds it idle
                    }
                }
            }
            case "unwrap" -> {
                if (((Class<?>) args[0]).isInstance(proxy)) {
                    return proxy;
                }
            }
            case "isWrapperFor" -> {
                if (((Class<?>) args[0]).isInstance(proxy)) {
                    return true;
                }
            }
            case "equals" -> {
                return proxy == args[0];
            }
            case "hashCode" -> {
                return System.identityHashCode(proxy);
            }
            case "toString" -> {
                return "Gated" + connection;
            }
            default -> {
            }
        }
        return call(method, args);
    }

    private Object call(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(connection, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
