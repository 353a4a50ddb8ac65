package io.cosched.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.IoEvent;
import io.netty.channel.IoHandle;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoOps;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DeferredOpsTest {

    private static final EpollIoOps READ = EpollIoOps.EPOLLIN.with(EpollIoOps.EPOLLRDHUP);
    private static final EpollIoOps NOT_READ = EpollIoOps.EPOLLRDHUP;

    /** What epoll was told, in order. */
    private final List<IoOps> told = new ArrayList<>();

    private boolean refuse;
    private boolean valid = true;
    private int closed;

    private final IoRegistration epoll = new IoRegistration() {
        @Override
        public <T> T attachment() {
            return null;
        }

        @Override
        public long submit(IoOps ops) {
            if (refuse) {
                throw new UncheckedIOException(new IOException("epoll_ctl: bad file descriptor"));
            }
            told.add(ops);
            return 0;
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public boolean cancel() {
            valid = false;
            return true;
        }
    };

    private final IoHandle handle = new IoHandle() {
        @Override
        public void handle(IoRegistration registration, IoEvent ioEvent) {}

        @Override
        public void close() {
            closed++;
        }
    };

    /** The loop: the caller is on it while {@code onLoop}; the next poll applies what was deferred. */
    private final class Loop implements DeferredOps.Loop {
        boolean onLoop = true;
        final List<DeferredOps> waiting = new ArrayList<>();

        @Override
        public boolean onLoop() {
            return onLoop;
        }

        @Override
        public void deferred(DeferredOps ops) {
            waiting.add(ops);
        }

        void poll() {
            List<DeferredOps> now = new ArrayList<>(waiting);
            waiting.clear();
            now.forEach(DeferredOps::apply);
        }
    }

    private final Loop loop = new Loop();
    private final DeferredOps ops = new DeferredOps(epoll, handle, loop, EpollIoOps.NONE);

    @Test
    void readingTurnedOffAndOnInOneTurnTellsEpollNothing() {
        ops.submit(READ); // the first: the descriptor is added at once
        assertThat(told).containsExactly(READ);
        ops.submit(NOT_READ); // a request arrives: Reactor Netty stops reading
        ops.submit(READ); // its last part is read: reading again
        loop.poll();
        assertThat(told)
                .as("the same interest as before the turn: no epoll_ctl")
                .containsExactly(READ);
    }

    @Test
    void aChangeThatStandsIsToldOnceBeforeTheNextPollWithItsLastValue() {
        ops.submit(READ);
        ops.submit(NOT_READ);
        ops.submit(NOT_READ.with(EpollIoOps.EPOLLOUT));
        assertThat(told).as("nothing yet: only the poll reads the registration").containsExactly(READ);
        assertThat(loop.waiting).hasSize(1);
        loop.poll();
        assertThat(told).containsExactly(READ, NOT_READ.with(EpollIoOps.EPOLLOUT));
        loop.poll();
        assertThat(told).as("told once").hasSize(2);
    }

    @Test
    void removingEveryInterestAndChangesOffTheLoopGoAtOnceAndTheLastWordWins() {
        ops.submit(READ);
        ops.submit(NOT_READ); // waits
        loop.onLoop = false;
        ops.submit(READ.with(EpollIoOps.EPOLLOUT)); // another thread: at once, the waiting change dropped
        assertThat(told).containsExactly(READ, READ.with(EpollIoOps.EPOLLOUT));
        loop.poll();
        assertThat(told)
                .as("the dropped change is not told after the newer one")
                .hasSize(2);
        loop.onLoop = true;
        ops.submit(EpollIoOps.NONE);
        assertThat(told).last().isEqualTo(EpollIoOps.NONE);
    }

    @Test
    void aCancelledRegistrationIsToldNothingMore() {
        ops.submit(READ);
        ops.submit(NOT_READ);
        ops.cancel();
        loop.poll();
        assertThat(told).containsExactly(READ);
    }

    @Test
    void aChangeEpollRefusesClosesTheChannel() {
        ops.submit(READ);
        ops.submit(NOT_READ);
        refuse = true;
        loop.poll();
        assertThat(closed).isEqualTo(1);
    }
}
