package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.Scheduler;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;

/** Every {@link Scheduler} bean (cosched's own and the application's), looked up when asked. */
final class SchedulerBeans implements Supplier<List<Scheduler>> {

    private final ObjectProvider<Scheduler> provider;

    SchedulerBeans(ObjectProvider<Scheduler> provider) {
        this.provider = provider;
    }

    @Override
    public List<Scheduler> get() {
        return provider.orderedStream().toList();
    }
}
