import ArgumentParser
import Foundation
import TrawlBench
import Trawl
import TrawlEngine
import TrawlJSON
import TrawlJobs
import TrawlTestServer

/// `trawl bench`: a load generator on the engine, closed or open model, on URLs or paginated flows.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load-generate with the engine: requests/s, MB/s, items/s, errors by kind, latency percentiles.",
        discussion: """
            With no URL, starts the embedded test server on 127.0.0.1 and benchmarks its small JSON \
            endpoint (client and server then share this machine's cores). -n counts requests across all \
            URLs, which are used round-robin.

            Closed model (default): -c workers each send their next request when the last one finished. \
            Open model (--rate R): request i is due at start + i/R whatever happened before; at most -c are \
            in flight, a request that finds every slot busy waits, and its latency is measured from its \
            intended send time, so stalls are not hidden (no coordinated omission). Late starts (more than \
            1 ms after the intended time) and the largest lateness are reported. Without -n or -d the open \
            model runs for 10 s.

            Paginated flows (--items KEYPATH --paginate STYLE): each of -c workers walks the pages of the \
            URL again and again (each walk is a flow), counting the items at KEYPATH as every body streams \
            in; -n counts page requests. With no URL, the embedded server's \
            /paged/page?n=10000&per_page=100&tag=bench is walked with --paginate page --total-pages total_pages.

            Latencies go into an HdrHistogram (microseconds, 3 significant digits). Requests sent during \
            --warmup are not measured; -n and -d count from its end.

            Several machines (--rate R --rate-store redis://HOST:PORT): every process naming the store and key \
            takes its requests' due times from one schedule of R/s kept there, so together they send R/s; a \
            Retry-After seen by one pauses all. -n and -d count per process.
            """)

    @Argument(help: "URLs to request, round-robin. None: the embedded test server.")
    var urls: [String] = []

    @Option(name: .shortAndLong, help: "Requests (or flows, with --items) in flight at once.")
    var concurrency: Int = 64

    @Option(name: [.customShort("n"), .customLong("requests")], help: "Total measured requests (default 20000).")
    var requests: Int?

    @Option(
        name: [.customShort("d"), .customShort("z"), .customLong("duration")],
        help: ArgumentHelp(
            "Run for this long instead of -n: seconds, or 500ms, 2s, 1m (-z as in oha).",
            discussion: "A hard deadline: requests still in flight at the end get a grace of 0.5 s, then are "
                + "cancelled and counted as cut off (not as errors).",
            valueName: "DURATION"),
        transform: BenchDurationOption.positiveSeconds)
    var duration: Double?

    @Option(
        help: ArgumentHelp(
            "Give up on a request after this long (500ms, 2s, 1m; counted as a timeout error).",
            valueName: "DURATION"),
        transform: BenchDurationOption.positiveSeconds)
    var timeout: Double?

    @Option(
        name: .customLong("expect-status"),
        help: ArgumentHelp(
            "The statuses of a successful request, such as 200,204,404 or 200-299 (default 200-399).",
            discussion: "A response with any other status is a failed request: counted among the errors by its "
                + "class (http_4xx, http_5xx) and judged by --threshold errors<….",
            valueName: "CODES"),
        transform: { text in
            guard let set = BenchStatusSet(parsing: text) else {
                throw ValidationError("give statuses from 100 to 599 or ranges of them, such as 200,204,404 or 200-299")
            }
            return set
        })
    var expectStatus: BenchStatusSet?

    @Option(
        help: ArgumentHelp(
            "Send requests for this long first (seconds, or 500ms, 2s, 1m), without measuring them.",
            valueName: "DURATION"),
        transform: { try BenchDurationOption.seconds($0) })
    var warmup: Double?

    @Option(
        name: .customLong("rate"),
        help: ArgumentHelp(
            "Open model: start this many requests per second, on schedule, whatever the responses do.",
            discussion: "START:END with --ramp SECONDS: the rate rises (or falls) linearly from START to END over "
                + "SECONDS, then stays at END (the warm-up runs at START); latency still counts from the "
                + "intended send times.",
            valueName: "R or START:END"))
    var rateSpec: String?

    @Option(
        help: ArgumentHelp(
            "With --rate START:END: how long the rate takes to go from START to END (seconds, or 30s, 2m).",
            valueName: "DURATION"),
        transform: { try BenchDurationOption.seconds($0) })
    var ramp: Double?

    @Flag(
        help: ArgumentHelp(
            "Search for the highest open-model rate at which every --threshold holds (needs --max-rate).",
            discussion: "Steady steps of -d seconds (default 3) after --warmup (default 0.5) each: rates double "
                + "from --max-rate/32 until one fails, then bisection to within 5%. Each step prints its evidence."))
    var findMaxRate = false

    @Option(help: "With --find-max-rate: the highest rate to try, requests/s.")
    var maxRate: Double?

    @Option(help: "Run N rounds of the same load; the JSON keeps each under rounds (for --compare).")
    var rounds: Int?

    @Flag(
        help: ArgumentHelp(
            "Compare two results: trawl bench --compare BEFORE.json AFTER.json (from --json; runs nothing).",
            discussion: "Prints requests/s, percentiles and errors side by side with ratios; a difference is "
                + "within noise when the rounds' ranges (--rounds) overlap."))
    var compare = false

    @Flag(help: "With --compare: compare runs even when they differ in what was measured (URLs, -c, rate, …).")
    var force = false

    @Flag(
        help: ArgumentHelp(
            "Merge results: trawl bench --merge A.json B.json … > all.json (from --json of several processes).",
            discussion: "Adds their whole latency histograms, so the percentiles are exact (as if one process had "
                + "recorded every request); sums counts, statuses and errors, and intervals by wall-clock time. "
                + "Prints the merged result as JSON; --threshold judges the merge (exit 3); runs nothing."))
    var merge = false

    /// `--rate R` or `--rate START:END`: START, and END when given (nil when a part is not a number).
    var rates: (start: Double, end: Double?)? {
        guard let rateSpec else { return nil }
        let parts = rateSpec.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let start = Double(parts[0]) else { return nil }
        if parts.count == 1 { return (start, nil) }
        guard let end = Double(parts[1]) else { return nil }
        return (start, end)
    }

    /// The open model's (starting) rate.
    var rate: Double? { rates?.start }

    @Option(
        name: [.customShort("X"), .customLong("request")], help: "The method (default GET, or POST with --body).",
        transform: RequestOption.method)
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(
        name: .customLong("sensitive-header"),
        help: "A header that carries a credential (repeatable): removed when a redirect leaves the origin, like Authorization.")
    var sensitiveHeaders: [String] = []

    @Option(help: "The request body (-d is the duration here).")
    var body: String?

    @Option(help: "Paginated flows: key path of the items in each page ('' or '$' for a bare array).")
    var items: String?

    @OptionGroup(title: "Paginated flows (with --items)") var pagination: PaginationFlags

    @Option(help: ArgumentHelp(
        "Engine loop threads, each with its own multi handle and connections: a number, or auto.",
        discussion: "auto (the default) uses one per core, at most 4 and at most -c, like wrk's -t: one loop "
            + "thread is one core's worth of small requests; without --items, half the cores when every URL is on "
            + "loopback (or the embedded server answers), as the server needs the rest."))
    var loops: String = "auto"

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    @Flag(help: "No live panel on the terminal while the run goes (the summary is still printed).")
    var quiet = false

    @Flag(
        help: ArgumentHelp(
            "A full live view on the terminal instead of the two-line panel: percentiles, statuses and histogram so "
                + "far, requests/s over time."))
    var tui = false

    @Option(
        help: ArgumentHelp(
            "The length of a row of the per-interval table (requests, errors, bytes, p50, p99, max, in flight): "
                + "seconds, or 500ms, 2s.",
            valueName: "DURATION"),
        transform: { try BenchDurationOption.seconds($0) })
    var interval: Double?

    @Option(
        help: ArgumentHelp(
            "A budget the run must meet, such as p99<250ms, errors<0.1%, rps>5000, status_5xx=0 (repeatable).",
            discussion: "Each prints pass or FAIL with the measured value; any failure exits 3."))
    var threshold: [String] = []

    @Option(help: "Write the latency percentile distribution to FILE in HdrHistogram's .hgrm format (ms).")
    var hgrm: String?

    @Option(
        help: ArgumentHelp(
            "Write a self-contained HTML report of the run to FILE (charts over time, percentile distribution).",
            discussion: "With result files instead of URLs (trawl bench --report out.html a.json b.json), draws "
                + "those results (from --json) on the same axes and runs nothing."))
    var report: String?

    @Flag(name: .customLong("http2"), help: "Negotiate HTTP/2 (https URLs only).")
    var http2 = false

    @Option(
        name: .customLong("connect-timeout"),
        help: ArgumentHelp("Longest wait for a connection (seconds, or 500ms, 2s).", valueName: "DURATION"),
        transform: { try BenchDurationOption.seconds($0) })
    var connectTimeout: Double?

    @OptionGroup(title: "TLS") var tls: TLSFlags

    @OptionGroup(title: "One --rate for several machines") var store: BenchStoreFlags

    func validate() throws {
        if requests != nil, duration != nil { throw ValidationError("give either -n or -d, not both") }
        try SecondsOption.validate(connectTimeout, flag: "--connect-timeout")
        try SecondsOption.validate(timeout, flag: "--timeout")
        if let requests, requests < 1 { throw ValidationError("-n must be at least 1") }
        if let duration, !(duration > 0) { throw ValidationError("-d must be positive") }
        if concurrency < 1 { throw ValidationError("-c must be at least 1") }
        guard BenchLoops.count(loops, concurrency: concurrency, targets: urls, flows: items != nil) != nil else {
            throw ValidationError("--loops must be auto or a number from 1 to 64, not '\(loops)'")
        }
        if let warmup, !(warmup >= 0) || !warmup.isFinite {
            throw ValidationError("--warmup must be 0 or more seconds")
        }
        try validateRates()
        try store.validate(rate: rateSpec, ramp: ramp != nil, findMaxRate: findMaxRate)
        if let duration, duration > 1e6 { throw ValidationError("-d must be at most 1000000 seconds") }
        if let warmup, warmup > 1e6 { throw ValidationError("--warmup must be at most 1000000 seconds") }
        if let interval, !(interval >= 0.1) || !(interval <= 86_400) {
            throw ValidationError("--interval must be from 0.1 to 86400 seconds, not \(interval)")
        }
        _ = try thresholds()
        try validateCapacitySearch()
        if let rounds, !(1...100).contains(rounds) { throw ValidationError("--rounds must be from 1 to 100") }
        if rounds ?? 1 > 1, findMaxRate { throw ValidationError("--rounds does not go with --find-max-rate") }
        if compare, urls.count != 2 || urls.contains(where: { $0.contains("://") }) {
            throw ValidationError("--compare takes two result files: trawl bench --compare BEFORE.json AFTER.json")
        }
        if let hgrm { try Self.validateWritable(hgrm, flag: "--hgrm") }
        if let report { try Self.validateWritable(report, flag: "--report") }
        try HeaderOption.validate(headers)
        try HeaderOption.validateSensitive(sensitiveHeaders)
        // --compare and --report with saved results take files, not URLs.
        if merge {
            if compare { throw ValidationError("--merge does not go with --compare") }
            if urls.isEmpty || urls.contains(where: { $0.contains("://") }) {
                throw ValidationError("--merge takes result files: trawl bench --merge A.json B.json … > all.json")
            }
            if urls.count > BenchMerge.maxInputs { throw ValidationError("--merge takes at most 1000 files") }
        }
        if !compare, !merge, !reportsFiles { for url in urls { try RequestOption.checkURL(url) } }
        try RequestOption.checkHeaderCharacters(headers)
        if items == nil {
            if pagination.paginate != nil { throw ValidationError("--paginate needs --items KEYPATH (where the items are)") }
            if let flag = pagination.given.first { throw ValidationError("\(flag) needs --items and --paginate") }
        } else {
            if pagination.paginate == nil, !urls.isEmpty {
                throw ValidationError("--items needs --paginate (link, page, offset, cursor:KEYPATH, next:KEYPATH)")
            }
            if rate != nil, store.rateStore == nil {
                throw ValidationError(
                    "--rate applies to plain URLs, not to paginated flows (--items), unless --rate-store shares it")
            }
            if let items, (try? JSONKeyPath.validated(items)) == nil {
                throw ValidationError("--items: '\(items)' is not a key path (write keys separated by dots)")
            }
            _ = try paginationStyle()
        }
    }

    /// The pagination style of the flows; with no URL, the embedded server's defaults fill in.
    private func paginationStyle() throws -> PaginationStyle {
        try pagination.style(
            defaultSpec: "page", defaultTotalPages: urls.isEmpty && pagination.paginate == nil ? "total_pages" : nil)
    }

    func run() async throws {
        if compare {
            try Self.compare(urls[0], urls[1], force: force)
            return
        }
        if merge {
            try mergeResults()
            return
        }
        if let report, reportsFiles {
            try Self.writeReport(of: urls, to: report)
            return
        }
        var server: TestServer?
        var targets = urls
        if targets.isEmpty {
            let started = try await TestServer.start(threads: 1)
            server = started
            targets = [started.url(items == nil ? "/json/small" : "/paged/page?n=10000&per_page=100&tag=bench")]
        }
        var config = Client.Configuration()
        config.maxConcurrentTransfers = concurrency
        config.loopThreads = BenchLoops.count(loops, concurrency: concurrency, targets: targets, flows: items != nil) ?? 1
        if http2 { config.httpVersion = .http2 }
        tls.apply(to: &config, environment: ProcessInfo.processInfo.environment)
        if let connectTimeout { config.timeouts.connect = .milliseconds(Int64(connectTimeout * 1000)) }
        if let timeout { config.timeouts.total = BenchDurationText.duration(seconds: timeout) }
        let client = Client(configuration: config)

        let requestBody: RequestBody? = body.map { .string($0) }
        let requestMethod = method.map { HTTPMethod(rawValue: $0) } ?? (requestBody == nil ? .get : .post)
        let prepared = targets.map { url in
            var request = Request(url: url, method: requestMethod, body: requestBody)
            HeaderOption.apply(headers, to: &request)
            HeaderOption.markSensitive(sensitiveHeaders, in: &request)
            return request
        }
        let target: BenchRunner.Target = if let items {
            .pages(prepared, items: JSONKeyPath(items), style: try paginationStyle())
        } else {
            .urls(prepared)
        }

        if findMaxRate {
            do {
                try await searchMaxRate(client: client, urls: targets, target: target)
            } catch {
                try await server?.shutdown()
                throw error
            }
            try await server?.shutdown()
            return
        }
        let defaultLimit: BenchRunner.Limit = rate == nil ? .requests(20_000)
            : .duration(.nanoseconds(Int64(max(10, ramp ?? 0) * 1e9)))
        let limit: BenchRunner.Limit = duration.map { .duration(.nanoseconds(Int64($0 * 1e9))) }
            ?? requests.map { .requests($0) } ?? defaultLimit
        var reports: [BenchReport] = []
        let shared = store.schedule(rate: rate, requests: prepared)
        await shared?.join()
        for round in 1...(rounds ?? 1) {
            let report = await runOnce(client: client, targets: targets, target: target, limit: limit, shared: shared)
            reports.append(report)
            if let rounds, rounds > 1 {
                let line = BenchRounds.line(report, round: round, of: rounds)
                if json { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
            }
            if report.interrupted { break }
        }
        await shared?.leave()
        try await server?.shutdown()
        try finish(reports, embeddedServer: server != nil)
    }

    private func runOnce(
        client: Client, targets: [String], target: BenchRunner.Target, limit: BenchRunner.Limit,
        shared: SharedBenchSchedule? = nil
    ) async -> BenchReport {
        let warmupSpan = Duration.nanoseconds(Int64((warmup ?? 0) * 1e9))
        let recorder = BenchRecorder(
            origin: .now + warmupSpan, interval: .nanoseconds(Int64((interval ?? 1) * 1e9)),
            stripes: client.executors.count)
        var runner = BenchRunner(
            client: client, urls: targets, target: target, concurrency: concurrency, limit: limit, recorder: recorder)
        runner.warmup = warmupSpan
        runner.rate = rate
        runner.shared = shared
        runner.timeout = timeout
        if let expectStatus { runner.expectedStatus = expectStatus }
        if let end = rates?.end, let ramp { runner.ramp = BenchRunner.Ramp(endRate: end, seconds: ramp) }
        let plan: BenchPanel.Plan = switch limit {
        case .duration(let span): .seconds(BenchReport.seconds(span))
        case .requests(let count): .requests(count)
        }
        var configuredPanel = BenchPanel(
            recorder: recorder, plan: plan, draws: BenchPanel.shouldDraw(json: json, quiet: quiet))
        configuredPanel.full = tui
        let panel = configuredPanel
        let configured = runner
        return await BenchInterrupt.run(recorder: recorder) {
            let ticker = Task { await panel.run() }
            let report = await configured.run()
            ticker.cancel()
            await ticker.value
            return report
        }
    }
}
