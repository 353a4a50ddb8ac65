package io.cosched.spring.web.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server's connection counts, and the listen queue as Linux reports it (a real one, where there is /proc). */
@Timeout(30)
class ServerConnectionsTest {

    @Test
    void acceptedConnectionsCountUntilTheyClose() {
        ServerConnections c = new ServerConnections();
        EmbeddedChannel a = new EmbeddedChannel();
        EmbeddedChannel b = new EmbeddedChannel();
        c.accepted(a);
        c.accepted(b);
        assertThat(c.accepted()).isEqualTo(2);
        assertThat(c.open()).isEqualTo(2);
        a.close();
        assertThat(c.open()).isEqualTo(1);
        assertThat(c.accepted()).isEqualTo(2);
        assertThat(c.listenQueue()).as("no port known yet").isEqualTo(ServerConnections.UNKNOWN);
        b.close();
    }

    @Test
    void theListenQueueIsTheRxQueueOfTheListeningSocketsOnThePort() {
        List<String> table = List.of(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
                "   0: 0100007F:1F90 00000000:0000 0A 00000000:0000002A 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0",
                "   1: 0100007F:1F90 0100007F:C350 01 00000000:00000010 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1",
                "   2: 0100007F:1F91 00000000:0000 0A 00000000:00000007 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0");
        assertThat(ServerConnections.listenQueue(table, 8080))
                .as("0x2A, the established socket not counted")
                .isEqualTo(42);
        assertThat(ServerConnections.listenQueue(table, 9999)).isZero();
        assertThat(ServerConnections.listenQueue(List.of(), 8080)).isEqualTo(ServerConnections.UNKNOWN);
    }

    @Test
    void theHostsListenOverflowsComeFromTcpExt() {
        List<String> netstat = List.of(
                "TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops",
                "TcpExt: 0 0 17 19",
                "IpExt: InNoRoutes InTruncatedPkts",
                "IpExt: 0 0");
        assertThat(ServerConnections.listenOverflows(netstat)).isEqualTo(17);
        assertThat(ServerConnections.listenOverflows(List.of("IpExt: A", "IpExt: 1")))
                .isEqualTo(ServerConnections.UNKNOWN);
    }

    @Test
    void connectionsTheKernelCompletedButNobodyAcceptedAreInTheListenQueue() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "no /proc/net/tcp: not Linux");
        try (ServerSocket listener = new ServerSocket()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50); // never accepts
            ServerConnections c = new ServerConnections();
            c.listening(listener.getLocalPort());
            assertThat(c.listenQueue()).isZero();
            List<Socket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    clients.add(new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort()));
                }
                assertThat(c.listenQueue()).isEqualTo(3);
                listener.accept().close();
                assertThat(c.listenQueue()).isEqualTo(2);
            } finally {
                for (Socket s : clients) {
                    s.close();
                }
            }
            assertThat(c.listenOverflows()).isGreaterThanOrEqualTo(0);
        }
    }
}
