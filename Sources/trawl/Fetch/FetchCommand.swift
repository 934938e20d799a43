import ArgumentParser
import Foundation
import Trawl
import TrawlJobs
import TrawlEngine

/// `trawl fetch`: a bulk job from a job file or from flags; items to JSONL, resumable with `--state`.
struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Walk paginated endpoints and write every item once, as JSONL; resumable and shardable.",
        discussion: """
            Give a job file (JSON or YAML, see docs/jobs.md) or one source's URL (as the argument or --url). \
            Without --paginate and --items (or with 'auto') they are detected from the first page, said on \
            stderr as the flags that pin them ('detected: ...'); --detect only says it. \
            With --state DIR the job survives crashes and kill -9: the same command resumes where the last \
            checkpoint left off and the output ends identical to an uninterrupted run's. \
            Exit status: 0 every page fetched; 1 some pages failed after their retries (listed, with the \
            command that retries only them; the output still holds every item read, in job order), a unit \
            ended short of the total its server announced (--allow-short accepts it), or the job could not \
            run; 2 bad usage. Only items go to stdout (-o -); everything else to stderr.
            """)

    @Argument(help: "A job file (.json, .yaml or .yml), or one source's URL (http:// or https://).")
    var jobFile: String?

    @OptionGroup(title: "Essentials") var essentials: FetchEssentials

    @OptionGroup(title: "Pagination (detected when absent)") var pagination: PaginationFlags

    @OptionGroup(title: "GraphQL (a Relay connection walked by its cursor)") var graphQL: GraphQLFlags


    @OptionGroup var walk: WalkFlags

    @OptionGroup(title: "Running on a cluster") var cluster: ClusterFlags
    @OptionGroup(title: "Prometheus metrics") var metrics: MetricsFlags
    @OptionGroup var detection: DetectFlags
    @OptionGroup(title: "Incremental sync") var incremental: IncrementalFlags

    @OptionGroup(title: "Conditional requests") var cacheFlags: CacheFlags

    @Option(
        name: [.customShort("X"), .customLong("request")], help: "Method (default GET; POST with -d or --json, as in curl).",
        transform: RequestOption.method)
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header 'Name: value' (repeatable; ${ENV} allowed).")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "Request body template (sent with POST unless -X).")
    var data: String?

    @Option(
        name: .customLong("json"),
        help: """
            A JSON request body, as curl's --json: sent with POST (unless -X), Content-Type and Accept \
            application/json (unless -H gives them).
            """)
    var json: String?

    /// The request body, from -d or --json.
    var body: String? { data ?? json }

    @Option(name: .customLong("side"), help: "A side field to record from each page (repeatable).")
    var side: [String] = []

    @Option(
        name: .customLong("matrix"),
        help: "A matrix axis for --url: 'org=apple,swiftlang', 'day=2024-01-01..2024-01-31 step 7d', 'n=1..9 step 2'.")
    var matrix: [String] = []

    @Option(
        name: .customLong("max-items"),
        help: """
            Cap each unit at the pages needed for N items (a search API's result cap); a job file's sources use \
            it unless they set max_items.
            """)
    var maxItems: Int?

    @Option(
        name: .customLong("max-pages"),
        help: "Cap each unit at N pages (a job file's sources: unless they set max_pages).")
    var maxPages: Int?

    @Option(name: .customLong("name"), help: "The source's name with --url (default 'items').")
    var name: String = "items"

    @Flag(name: .customLong("with-meta"), help: "Wrap items: {\"source\",\"unit\",\"page\",\"item\"}.")
    var withMeta = false

    @Option(help: "Run shard I of N: 'I/N' (0-based). Also read from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.")
    var shard: String?

    @Option(name: .customLong("shard-count"), help: "Shard count with JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs).")
    var shardCount: Int?

    @Option(name: [.customShort("c"), .customLong("concurrency")], help: "Requests in flight in all (default 16).")
    var concurrency: Int?

    @Option(name: .customLong("per-host"), help: "Requests in flight per host (default 8).")
    var perHost: Int?

    @Option(help: "Requests per second per host.", transform: NumberOption.rate)
    var rate: Double?

    @Option(help: "Attempts per page, the first included (default 5).")
    var attempts: Int?

    @Option(name: .customLong("backoff-ms"), help: "First retry backoff in ms, doubling with jitter (default 250).")
    var backoffMs: Int?

    @Option(
        name: .customLong("max-wait"), help: "Longest rate-limit pause in seconds (default 120).",
        transform: { try NumberOption.seconds($0) })
    var maxWait: Double?

    @Option(
        name: .customLong("timeout"), help: "Per-request timeout in seconds (default 60).",
        transform: { try NumberOption.seconds($0, positive: true) })
    var timeout: Double?

    @Option(name: .customLong("max-page-bytes"), help: "Largest page, in bytes, as its JSONL (default 64 MiB).")
    var maxPageBytes: Int?

    @Option(name: .customLong("connect-timeout"), help: "Longest wait for a connection, in seconds.")
    var connectTimeout: Double?

    @OptionGroup(title: "TLS (over the job file's tls:)") var tls: TLSFlags

    @OptionGroup(title: "HTTP version (over the job file's settings.http)") var httpVersion: HTTPVersionFlags

    @Option(help: "Write a JSON report here.")
    var report: String?

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "No progress display and no summary.")
    var quiet = false

    var url: String? { essentials.url }
    var items: String? { essentials.items }
    var output: String? { essentials.output }
    var outputDirectory: String? { essentials.outputDirectory }
    var state: String? { essentials.state }
    var restart: Bool { essentials.restart }

    func validate() throws {
        if jobFile == nil, url == nil { throw ValidationError("give a job file or a URL (or --url)") }
        if jobFile != nil, url != nil { throw ValidationError("give a job file or --url, not both") }
        if detection.only, jobFilePath != nil {
            throw ValidationError("--detect and --dry-run take a URL, not a job file")
        }
        if jobFilePath != nil, !incremental.isEmpty { throw ValidationError(IncrementalFlags.jobFileMessage) }
        if output != nil, outputDirectory != nil { throw ValidationError("give -o or --output-dir, not both") }
        if let report, let output, Self.samePath(report, output) {
            throw ValidationError("--report \(report) names the output file too: give the report a file of its own")
        }
        try HeaderOption.validate(headers)
        try RequestOption.checkHeaderCharacters(headers)
        try SecondsOption.validate(connectTimeout, flag: "--connect-timeout")
        if data != nil, json != nil { throw ValidationError("-d/--data and --json both give the body: pass one") }
        if graphQL.isGiven {
            if jobFilePath != nil { throw ValidationError("--graphql-query takes a URL, not a job file (use graphql: there)") }
            let clashing = [
                ("--paginate", pagination.paginate != nil), ("--items", items != nil), ("-d/--data", data != nil),
                ("--json", json != nil),
            ]
            if let (flag, _) = clashing.first(where: { $0.1 }) {
                throw ValidationError("\(flag) cannot be given with --graphql-query: the query is the body and its connection the pages")
            }
        }
        if let maxItems, maxItems < 1 { throw ValidationError("--max-items must be at least 1, not \(maxItems)") }
        if let maxPages, maxPages < 1 { throw ValidationError("--max-pages must be at least 1, not \(maxPages)") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var job = try loadJob(environment: environment)
        applyOverrides(to: &job.settings)
        walk.apply(to: &job.settings)
        cluster.apply(to: &job.settings)
        cacheFlags.apply(to: &job.settings)
        applyTLS(to: &job, environment: environment)
        for index in job.sources.indices {
            job.sources[index].maxItems = job.sources[index].maxItems ?? maxItems
            job.sources[index].maxPages = job.sources[index].maxPages ?? maxPages
        }
        var firstPages: [DetectedFirstPage] = []
        if job.sources.contains(where: { $0.detectsPagination || $0.detectsItems }) {
            var detection = detector
            detection.settings = job.settings
            firstPages = try await detection.resolve(
                &job, stateDirectory: self.detection.only ? nil : state, restart: restart)
            if self.detection.only {
                let detecting = job.sources.filter { $0.detectsPagination || $0.detectsItems }
                for (page, source) in zip(firstPages, detecting) {
                    print(FetchDetection.snippet(page.detection.settings, items: page.detection.items, source: source))
                }
                return
            }
        }
        let selectedShard: Shard?
        do {
            if let shard {
                let parsed = try Shard.parse(shard)
                if let shardCount, shardCount != parsed.count {
                    throw ValidationError(
                        "--shard \(shard) has \(parsed.count) shards but --shard-count is \(shardCount)")
                }
                selectedShard = parsed
            } else {
                selectedShard = try Shard.fromEnvironment(environment, shardCount: shardCount)
            }
        } catch {
            throw ValidationError("\(error)")
        }
        if selectedShard == nil, let shardCount {
            // Without an index the count would select nothing: every unit would run, in every pod.
            throw ValidationError(
                "--shard-count \(shardCount) was given but JOB_COMPLETION_INDEX (Kubernetes Indexed Job) and "
                    + "SLURM_ARRAY_TASK_ID are not set; set one, or pass --shard I/\(shardCount) instead")
        }
        cluster.announce(job.settings, shard: selectedShard)
        let target = outputTarget(job)
        if case .file(let path) = target, Self.sourceCount(job) > 1, !withMeta, !quiet {
            // Asked for: one file. Not silently, though: nothing on a line says which source it came from.
            let note =
                "note: the \(Self.sourceCount(job)) sources of this job all go into \(path) and no line says "
                + "which source it came from: --output-dir DIR writes one file per source, --with-meta tags "
                + "each line with its source\n"
            FileHandle.standardError.write(Data(TerminalText.safe(note).utf8))
        }
        var options = JobRunOptions(output: target, stateDirectory: state, environment: environment)
        options.restart = restart
        options.withMeta = withMeta
        options.firstPages = FetchDetection.replay(firstPages)
        if !quiet {
            options.announce = { FileHandle.standardError.write(Data(TerminalText.safe($0 + "\n").utf8)) }
        }
        if let maxPageBytes { options.maxPageBytes = max(1, maxPageBytes) }
        let exporter = try await metrics.start(shard: selectedShard, settings: job.settings)
        options.metricsObserver = exporter?.metrics
        let runner = try JobRunner(job: job, options: options, shard: selectedShard)
        let display = JobProgressDisplay(quiet: quiet)
        display.start { runner.progress }
        let resume = resumeCommand(stateDirectory: state == nil ? runner.stateDirectory : nil)
        let interrupt = await FetchInterrupt.install { [state] in
            let progress = runner.progress
            return "\ninterrupted: \(progress.pagesDone) pages and \(progress.items) items fetched in this run; "
                + "every page committed before now is kept in \(state ?? runner.stateDirectory)\n"
                + "resume with: \(resume)\n"
        }
        defer { interrupt.disarm() }
        let result: JobReport
        do {
            result = try await runner.run()
        } catch {
            display.stop(runner.progress)
            await exporter?.finish()
            throw CLIFailure("error: \(FileErrorText.describe(error).map { "cannot use \($0)" } ?? "\(error)")")
        }
        display.stop(runner.progress)
        await exporter?.finish()
        if let report { try JobSummary.writeReport(result, to: report) }
        // Only items go to stdout (`-o -`, `trawl fetch URL -o - | jq`): the summary is for the person, on stderr.
        if !quiet { FileHandle.standardError.write(Data(TerminalText.safe(JobSummary.text(result) + "\n").utf8)) }
        if !result.failures.isEmpty || !result.complete {
            let text = JobSummary.failureText(result, retry: retryCommand(result))
            FileHandle.standardError.write(Data(TerminalText.safe(text).utf8))
            throw ExitCode(1)
        }
        let drifted = result.flags.filter { $0.kind == .drift }
        if !drifted.isEmpty, !job.settings.allowDrift {
            FileHandle.standardError.write(
                Data(TerminalText.safe(JobSummary.driftText(drifted, outputs: result.outputs)).utf8))
            throw ExitCode(1)
        }
        let short = result.flags.filter { $0.kind == .shortOfTotal }
        if !short.isEmpty, !job.settings.allowShort {
            let text = JobSummary.shortText(short, outputs: result.outputs)
            FileHandle.standardError.write(Data(TerminalText.safe(text).utf8))
            throw ExitCode(1)
        }
    }

    private func loadJob(environment: [String: String]) throws -> Job {
        if let jobFile = jobFilePath {
            do {
                return try Job.load(contentsOf: jobFile, environment: environment)
            } catch where error.code == .sourceName || error.code == .parents || error.code == .neverSendable {
                // A source name names a file: an unsafe or clashing one is bad usage (exit 2), like a bad -o; an
                // unknown parent: or a cycle of parents too, and a value that can never be sent, like a bad -H.
                // Every other mistake in the file's content (a URL past the length cap included) is a job file
                // error (1).
                throw ValidationError("\(error)")
            } catch {
                throw CLIFailure("error: \(error)")
            }
        }
        let style = detectsPagination ? PaginationStyle.link() : try pagination.style(defaultSpec: "link")
        if style.inBody, !Request(url: "", method: .post, body: .string(body ?? "")).hasJSONObjectBody {
            throw ValidationError(
                "--paginate-in body sets the position in the -d/--data body, which "
                    + (body == nil ? "is not given" : "is not a JSON object") + ": give one, as in -d '{\"page\":{}}'")
        }
        var headerTemplates = headers.map { header -> JobHeader in
            let (name, value) = HeaderOption.split(header)
            return JobHeader(name: name, value: value)
        }
        if json != nil {
            // curl's --json: both headers, unless given.
            for name in ["Content-Type", "Accept"]
            where !headerTemplates.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
                headerTemplates.append(JobHeader(name: name, value: "application/json"))
            }
        }
        var axes: [MatrixAxis] = []
        for spec in matrix {
            guard let equals = spec.firstIndex(of: "="), equals != spec.startIndex else {
                throw ValidationError("--matrix '\(spec)' is not NAME=VALUES")
            }
            let axisName = String(spec[..<equals])
            let values = String(spec[spec.index(after: equals)...])
            if values.contains("..") {
                do {
                    axes.append(try MatrixAxis.range(axisName, values))
                } catch {
                    throw ValidationError("--matrix \(axisName): \(error)")
                }
            } else {
                axes.append(MatrixAxis(name: axisName, values: values.split(separator: ",").map(String.init)))
            }
        }
        var source = JobSource(
            name: name, url: sourceURL ?? "", method: HTTPMethod(rawValue: method ?? (body == nil ? "GET" : "POST")),
            headers: headerTemplates, body: body, pagination: style, items: JSONKeyPath(detectsItems ? "" : items ?? ""),
            side: side.map { JSONKeyPath($0) },
            matrix: axes)
        source.detectsPagination = detectsPagination
        source.detectsItems = detectsItems
        source.bracesOutsideMatrixAreText = true
        if let graphQL = try graphQL.source() {
            source.use(graphQL)
            source.detectsPagination = false
            source.detectsItems = false
        }
        try incremental.apply(to: &source)
        let job = Job(sources: [source])
        do {
            try job.validate()
            for unit in try job.units(environment: environment) {
                try RequestOption.checkURL(unit.request.url, "--url expands to")
            }
        } catch let error as ValidationError {
            throw error
        } catch let error as JobSpecError where error.code == .unknownParameter {
            // Only the URL is checked (headers and the body are sent as given).
            let name = error.parameter ?? "?"
            let remedy =
                axes.isEmpty
                ? "give --matrix \(name)=VALUE,VALUE to fetch it once per value, or write the braces as %7B and %7D"
                : "the --matrix axes are \(axes.map(\.name).joined(separator: ", ")); "
                    + "write the braces as %7B and %7D for the text itself"
            throw ValidationError("the URL's '{\(name)}' names no --matrix axis (\(remedy))")
        } catch let error as JobSpecError where error.part != nil {
            // Said with the flag that gave that part of the request, not the job-file field it became.
            let place =
                switch error.part {
                case .header(let name): "-H '\(name): …'"
                case .body: graphQL.query != nil ? "--graphql-query/--graphql-variables" : "-d/--json"
                default: "the URL"
                }
            throw ValidationError("\(place): \(error.message)" + (error.hint.map { " (\($0))" } ?? ""))
        } catch {
            throw ValidationError("\(error)")
        }
        return job
    }

    private func applyOverrides(to settings: inout JobSettings) {
        if let concurrency { settings.concurrency = max(1, concurrency) }
        if let perHost { settings.perHost = max(1, perHost) }
        if let rate { settings.ratePerHost = rate }
        if let attempts { settings.attempts = max(1, attempts) }
        if let backoffMs { settings.backoff = .milliseconds(max(0, backoffMs)) }
        if let maxWait { settings.maxWait = .milliseconds(Int64((maxWait * 1000).rounded())) }
        if let timeout { settings.timeout = .milliseconds(Int64(max(1, (timeout * 1000).rounded()))) }
        if let connectTimeout { settings.connectTimeout = .milliseconds(Int64(max(0.001, connectTimeout) * 1000)) }
        if let version = httpVersion.preference { settings.http = version }
    }

    /// Each source's TLS: the job file's settings, the source's own `tls:`, then the flags; curl's CA variables
    /// where none of them names a CA. `-k` (or `insecure: true`) says so once on stderr.
    private func applyTLS(to job: inout Job, environment: [String: String]) {
        for index in job.sources.indices {
            job.sources[index].tls = job.settings.tls
                .overlaid(with: job.sources[index].tls ?? TLSSettings())
                .overlaid(with: tls.overlay)
                .withCurlEnvironment(environment)
        }
    }

    private func outputTarget(_ job: Job) -> JobOutput {
        if let outputDirectory { return .directory(outputDirectory) }
        // `-o -` is stdout, as curl spells it: written in place like any pipe or device.
        if output == "-" { return .file("/dev/stdout") }
        if let output { return .file(output) }
        if let jobFile = jobFilePath {
            // A pipe or process substitution (/dev/fd/63) names nothing: its number would name the output.
            let attributes = try? FileManager.default.attributesOfItem(atPath: jobFile)
            let base =
                attributes?[.type] as? FileAttributeType == .typeRegular
                ? (PathName.lastComponent(of: jobFile) as NSString).deletingPathExtension : "job"
            // Sources of several shapes never share a file unasked: one file per source, BASE/SOURCE.jsonl.
            if Self.sourceCount(job) > 1 { return .directory(base) }
            return .file(base + ".jsonl")
        }
        return .file(name + ".jsonl")
    }

    /// The job's distinct source names.
    static func sourceCount(_ job: Job) -> Int { Set(job.sources.map(\.name)).count }

    /// Whether two paths name the same file: equal once made absolute and standardized, or the same inode.
    static func samePath(_ first: String, _ second: String) -> Bool {
        let absolute = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.path }
        if absolute(first) == absolute(second) { return true }
        let manager = FileManager.default
        guard let one = try? manager.attributesOfItem(atPath: first),
            let two = try? manager.attributesOfItem(atPath: second)
        else { return false }
        return (one[.systemFileNumber] as? NSNumber) == (two[.systemFileNumber] as? NSNumber)
            && (one[.systemNumber] as? NSNumber) == (two[.systemNumber] as? NSNumber)
    }

    /// The same command with the state directory the failed run left, so only what is missing is fetched.
    private func retryCommand(_ report: JobReport) -> String {
        resumeCommand(stateDirectory: state == nil ? report.stateDirectory : nil)
    }

    /// The same command (credential headers redacted, without `--restart`), with `--state DIRECTORY` when given.
    private func resumeCommand(stateDirectory: String?) -> String {
        let command = Self.retryArguments(
            Self.redactingHeaders(
                Array(CommandLine.arguments.dropFirst()), sensitive: Set(walk.sensitiveHeaders.map { $0.lowercased() })),
            addingState: stateDirectory)
        return (["trawl"] + command).map(JobSummary.shellQuoted).joined(separator: " ")
    }

    /// `arguments` with the values of credential headers (`-H 'Authorization: …'`, `--header=X-Api-Key:…`, any
    /// name the origin rule treats as sensitive, and the `sensitive` names of `--sensitive-header`) shown as
    /// `REDACTED`: the retry command is printed.
    static func redactingHeaders(_ arguments: [String], sensitive: Set<String> = []) -> [String] {
        func redacted(_ header: String) -> String {
            let (name, _) = HeaderOption.split(header)
            return OriginGuard.isSensitive(name, extra: sensitive) ? name + ": " + Redaction.placeholder : header
        }
        var result: [String] = []
        var takesHeader = false
        for argument in arguments {
            if takesHeader {
                result.append(redacted(argument))
                takesHeader = false
            } else if argument == "-H" || argument == "--header" {
                result.append(argument)
                takesHeader = true
            } else if argument.hasPrefix("--header=") {
                result.append("--header=" + redacted(String(argument.dropFirst("--header=".count))))
            } else if argument.hasPrefix("-H"), argument.count > 2 {
                result.append("-H" + redacted(String(argument.dropFirst(2))))
            } else {
                result.append(argument)
            }
        }
        return result
    }

    /// `arguments` (without the program name) made into a retry: without `--restart`, which would throw the
    /// saved progress away and fetch everything again, and with `--state DIRECTORY` when given.
    static func retryArguments(_ arguments: [String], addingState directory: String?) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                result += arguments[(index - 1)...]
                break
            }
            if argument == "--restart" { continue }
            result.append(argument)
        }
        if let directory {
            let separator = result.firstIndex(of: "--") ?? result.endIndex
            result.insert(contentsOf: ["--state", directory], at: separator)
        }
        return result
    }
}

/// The flags most runs use, shown first by `trawl fetch --help`.
struct FetchEssentials: ParsableArguments {
    @Option(help: "One source's URL (template: {param} from --matrix, ${ENV} from the environment).")
    var url: String?

    @Option(help: "Key path of the items in each page ('' or '$' for a bare array; absent or 'auto': detected).")
    var items: String?

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: "The JSONL output file (default NAME.jsonl); '-' for stdout, which only items ever reach.")
    var output: String?

    @Option(name: .customLong("output-dir"), help: "One JSONL file per source in this directory.")
    var outputDirectory: String?

    @Option(
        help: """
            State directory: checkpoint and in-progress units; makes the job resumable (a finished job's next run \
            is a new one).
            """)
    var state: String?

    @Flag(help: "Ignore saved state and start over (the output is rewritten).")
    var restart = false
}

/// Ctrl-C during `trawl fetch`: what was kept and the command that resumes, on stderr, then exit 130 at once.
/// Stopping there is as safe as `kill -9`, which a run with state survives by design (every page is durable
/// before the checkpoint counts it); nothing is flushed or cut short that a resume would need.
enum FetchInterrupt {
    static func install(_ message: @escaping @Sendable () -> String) async -> InterruptTrap {
        await InterruptTrap.arm {
            try? OutputWriting.write(Array(TerminalText.safe(message()).utf8), to: 2, name: "stderr")
            _exit(130)
        }
    }
}
