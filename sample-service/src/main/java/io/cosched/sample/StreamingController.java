package io.cosched.sample;

import io.cosched.Coroutines;
import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.RunAsCoroutine;
import io.cosched.spring.web.StreamingResponseBody;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.zip.CRC32C;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * What a payments team streams: balance updates as server-sent events, an export as CSV and as JSON lines, a
 * CSV of deposits uploaded as a multipart file, and documents uploaded as raw bodies, all in blocking style.
 */
@RestController
@RunAsCoroutine
@RequestMapping("/api")
class StreamingController {

    private final AccountService accounts;
    private final Counter balanceEvents;

    StreamingController(AccountService accounts, MeterRegistry meters) {
        this.accounts = accounts;
        this.balanceEvents = meters.counter("sample.balance.events");
    }

    /**
     * The account's balance every {@code everyMs}, as server-sent events numbered from 1, each naming who watches
     * (read in the producer from SecurityContextHolder). The producer parks whenever the client is slower. With
     * {@code slowMs} each read also holds its connection in PostgreSQL that long.
     */
    @GetMapping(path = "/accounts/{id}/balance-events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<ServerSentEvent<BalanceEvent>> balanceEvents(
            @PathVariable long id,
            @RequestParam(defaultValue = "1000") long everyMs,
            @RequestParam(defaultValue = "0") long slowMs) {
        return events -> {
            events.send(ServerSentEvent.<BalanceEvent>builder()
                    .comment("balance of account " + id)
                    .build());
            for (long n = 1; ; n++) {
                AccountService.AccountView account = slowMs > 0 ? accounts.findSlowly(id, slowMs) : accounts.find(id);
                String viewer =
                        SecurityContextHolder.getContext().getAuthentication().getName();
                events.send(ServerSentEvent.builder(new BalanceEvent(account, viewer))
                        .id(Long.toString(n))
                        .event("balance")
                        .build());
                balanceEvents.increment();
                Coroutines.sleep(Duration.ofMillis(everyMs));
            }
        };
    }

    /** Every account as CSV, a page at a time; for admins. */
    @GetMapping(path = "/accounts/export.csv", produces = "text/csv")
    ResponseEntity<StreamingResponseBody> exportCsv() {
        return ResponseEntity.ok()
                .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"accounts.csv\"")
                .body(out -> {
                    Writer csv = new OutputStreamWriter(out, StandardCharsets.UTF_8);
                    csv.write("id,owner,balance_cents\n");
                    for (int page = 0; ; page++) {
                        var rows = accounts.page(page, 100);
                        for (AccountService.AccountView a : rows) {
                            csv.write(a.id() + "," + a.owner() + "," + a.balanceCents() + "\n");
                        }
                        if (rows.size() < 100) {
                            break;
                        }
                    }
                    csv.flush();
                });
    }

    /** Every account as a JSON line; for admins. */
    @GetMapping(path = "/accounts/export", produces = MediaType.APPLICATION_NDJSON_VALUE)
    EventStream<AccountService.AccountView> exportJsonLines() {
        return lines -> {
            for (int page = 0; ; page++) {
                var rows = accounts.page(page, 100);
                for (AccountService.AccountView a : rows) {
                    lines.send(a);
                }
                if (rows.size() < 100) {
                    return;
                }
            }
        };
    }

    /** Deposits from an uploaded CSV ({@code account,cents,reference} per line) and a note; for admins. */
    @PostMapping(path = "/deposits/import", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
    ImportResult importDeposits(MultipartStream parts) throws IOException {
        String note = "";
        int deposits = 0;
        MultipartStream.Part part;
        while ((part = parts.next()) != null) {
            if ("note".equals(part.name())) {
                note = part.value();
            } else if ("file".equals(part.name())) {
                try (BufferedReader lines =
                        new BufferedReader(new InputStreamReader(part.inputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = lines.readLine()) != null) {
                        String[] f = line.split(",", 3);
                        accounts.deposit(Long.parseLong(f[0]), Long.parseLong(f[1]), f[2]);
                        deposits++;
                    }
                }
            }
        }
        return new ImportResult(deposits, note);
    }

    /** A document's size and CRC-32C, read as it arrives: no size limit, constant memory. */
    @PostMapping(path = "/documents", consumes = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    DocumentReceipt document(InputStream body) throws IOException {
        CRC32C crc = new CRC32C();
        byte[] buffer = new byte[64 * 1024];
        long size = 0;
        int n;
        while ((n = body.read(buffer)) != -1) {
            crc.update(buffer, 0, n);
            size += n;
        }
        return new DocumentReceipt(
                size,
                Long.toHexString(crc.getValue()),
                SecurityContextHolder.getContext().getAuthentication().getName());
    }

    record BalanceEvent(AccountService.AccountView account, String viewer) {}

    record ImportResult(int deposits, String note) {}

    record DocumentReceipt(long size, String crc32c, String uploadedBy) {}
}
