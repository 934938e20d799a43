import ArgumentParser
import Foundation
import Trawl
import TrawlEngine
import TrawlJSON
import TrawlJobs

/// `trawl fetch`'s flags for zero-configuration runs.
struct DetectFlags: ParsableArguments {
    @Flag(
        name: .customLong("detect"),
        help: "Fetch the first page, print what was detected (flags and a job-file snippet) and exit; write nothing.")
    var detect = false

    @Flag(name: .customLong("dry-run"), help: "The same as --detect.")
    var dryRun = false

    var only: Bool { detect || dryRun }
}

/// `trawl fetch URL` without `--paginate` or `--items` (or with `auto`): the first page is fetched, its pagination
/// and items detected (``PaginationDetection``), the plan said on stderr as the flags that pin it, and the page
/// replayed as page 1 of the walk. With `--state DIR` the plan is kept in `DIR/detected-plan.json`, so a resumed
/// run walks with the same plan without detecting again.
struct FetchDetection {
    var settings: JobSettings
    /// `--cursor-param`, for a `--url` source.
    var cursorParam: String?
    var maxPageBytes: Int
    var environment: [String: String]

    /// A stored plan, for the source of this name and URL template. The URL is kept redacted (userinfo, `token=`…
    /// as `REDACTED`: the state never holds a secret) and recognised by its SHA-256.
    struct Stored: Codable {
        var name: String?
        var url: String
        var urlSHA256: String?
        var settings: [[String]]
        var items: String
        var reads: String?
        var singlePage: Bool
    }

    static let planFile = "detected-plan.json"

    /// Detects (or reads from `stateDirectory`) the plan of every source that leaves its pagination or items to
    /// detection, sets it on the source and says it; returns the first pages to replay.
    func resolve(_ job: inout Job, stateDirectory: String?, restart: Bool) async throws -> [DetectedFirstPage] {
        let stored = stateDirectory.flatMap { restart ? nil : Self.load($0) } ?? []
        var kept: [Stored] = []
        var pages: [DetectedFirstPage] = []
        for index in job.sources.indices where job.sources[index].detectsPagination || job.sources[index].detectsItems {
            let source = job.sources[index]
            let digest = Self.digest(source.url)
            if let stateDirectory, let plan = stored.first(where: {
                $0.name == source.name && ($0.urlSHA256 == digest || ($0.urlSHA256 == nil && $0.url == source.url))
            }) {
                let (style, path) = try Self.style(plan)
                if source.detectsPagination { job.sources[index].pagination = style }
                job.sources[index].items = path
                Self.unwrapEdges(&job.sources[index])
                let names = plan.settings.compactMap {
                    $0.count == 2 ? PaginationDetection.Setting(name: $0[0], value: $0[1]) : nil
                }
                Self.say(
                    source.detectsPagination ? names : [], items: path, url: source.url,
                    single: plan.singlePage && source.detectsPagination, from: "stored in \(stateDirectory)")
                kept.append(plan)
                continue
            }
            guard let first = try await detect(job, source: index) else { continue }
            let detection = first.detection
            if source.detectsPagination { job.sources[index].pagination = detection.style }
            job.sources[index].items = detection.items
            Self.unwrapEdges(&job.sources[index])
            Self.say(
                source.detectsPagination ? detection.settings : [], items: detection.items, url: source.url,
                single: detection.isSinglePage && source.detectsPagination, from: nil)
            Self.say(first.probes)
            kept.append(Self.stored(detection, source: source))
            pages.append(first)
        }
        if let stateDirectory { Self.store(kept, in: stateDirectory) }
        return pages
    }

    /// The first page of the source's first unit, fetched and read.
    private func detect(_ job: Job, source index: Int) async throws -> DetectedFirstPage? {
        let source = job.sources[index]
        let unit: WorkUnit
        do {
            guard let first = try job.units(environment: environment).first(where: { $0.sourceIndex == index })
            else { return nil }
            unit = first
        } catch {
            throw ValidationError("\(error)")
        }
        var configuration = Client.Configuration()
        configuration.tls = unit.tls
        configuration.timeouts.total = settings.timeout
        if let connect = settings.connectTimeout { configuration.timeouts.connect = connect }
        configuration.maxBodySize = maxPageBytes
        configuration.httpVersion = settings.http ?? .http2
        var exchange = PageExchange(client: Client(configuration: configuration), itemsPath: .root, form: .json)
        // The first page is retried as the walk's pages are (a 503 or a dropped connection may pass).
        exchange.retryPolicy = RetryPolicy(attempts: max(1, settings.attempts), backoff: settings.backoff)
        // Given pagination is not detected: a cursor-like key must not fail the detection of the items.
        let param = source.detectsPagination ? cursorParam : cursorParam ?? "cursor"
        do {
            return try await PaginationDetection.fetchFirstPage(
                unit.request, exchange: exchange, items: source.detectsItems ? nil : source.items, cursorParam: param,
                maxBytes: maxPageBytes)
        } catch let error as PaginationDetectionError {
            throw failure(error, url: source.url)
        } catch let error as PaginationError {
            throw CLIFailure(
                "error: the first page of \(source.url) (fetched to detect its pagination) failed: "
                    + "\(error.underlying)")
        }
    }

    /// One stub replaying every detected first page, each once.
    static func replay(_ pages: [DetectedFirstPage]) -> (@Sendable (Request) async throws -> RawResponse?)? {
        guard !pages.isEmpty else { return nil }
        let replays = pages.map(\.replay)
        return { request in
            for replay in replays { if let page = try await replay(request) { return page } }
            return nil
        }
    }

    /// The error for a first page whose shape detection cannot read: what was found and the flags to set.
    private func failure(_ error: PaginationDetectionError, url: String) -> Error {
        var lines = ["error: cannot detect the pagination of \(url): \(error.message)"]
        if !error.probes.isEmpty {
            lines.append("page 2 was tried with each plan that could fit; none did:")
            lines += Self.probeLines(error.probes)
        }
        switch error.kind {
        case .ambiguousItems:
            lines.append("candidates:")
            for candidate in error.candidates {
                lines.append(
                    "  --items \(JobSummary.shellQuoted(candidate.path.description))   (\(candidate.count) objects)")
            }
            lines.append("choose one with --items KEYPATH")
        case .unknownCursorParameter:
            let path = error.cursorPath?.description ?? "?"
            lines.append(
                "give the query parameter that carries it: --cursor-param NAME "
                    + "(with --paginate cursor:\(JobSummary.shellQuoted(path)))")
        case .unknownShape:
            let keys = error.topLevelKeys.isEmpty ? "(none)" : error.topLevelKeys.joined(separator: ", ")
            lines.append("top-level keys: \(keys)")
            lines.append(
                "set --items KEYPATH ('$' for a bare array) and --paginate (link, page, offset, cursor:KEYPATH, "
                    + "next:KEYPATH)")
        }
        lines.append("nothing was written")
        FileHandle.standardError.write(Data(TerminalText.safe(lines.joined(separator: "\n") + "\n").utf8))
        return ExitCode(2)
    }

    /// A detected GraphQL connection read at its `edges`: each item is the edge's `node`.
    static func unwrapEdges(_ source: inout JobSource) {
        guard source.pagination.graphQLConnection != nil, source.items.components.last == .key("edges") else { return }
        source.itemMember = "node"
    }

    /// `query` with a space after each `{` that a name follows, outside its strings: a job file reads `nodes{id}`
    /// as the template parameter `{id}`, and GraphQL reads `nodes{ id}` as the same selection.
    static func spacedBraces(_ query: String) -> String {
        var out = String.UnicodeScalarView()
        var inString = false
        var escaped = false
        let scalars = Array(query.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            out.append(scalar)
            if inString {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inString = false
                }
            } else if scalar == "\"" {
                inString = true
            } else if scalar == "{", index + 1 < scalars.count, JobTemplate.isIdentifierStart(scalars[index + 1]) {
                out.append(" ")
            }
        }
        return String(out)
    }

    /// The flags that pin a detected plan: `--paginate next:links.next --items data`.
    static func flags(_ settings: [PaginationDetection.Setting], items: JSONKeyPath?) -> [String] {
        let names = [
            "paginate": "--paginate", "param": "--page-param", "cursor_param": "--cursor-param",
            "limit_param": "--limit-param", "limit": "--page-size", "total": "--total", "total_pages": "--total-pages",
            "start": "--start", "graphql_connection": "--graphql-connection",
        ]
        var result: [String] = []
        for setting in settings { result += [names[setting.name] ?? "--\(setting.name)", setting.value] }
        return result + (items.map { ["--items", $0.description] } ?? [])
    }

    /// The page-2 probes that settled (or failed to settle) a plan, one line each, on stderr.
    static func probeLines(_ probes: [DetectionProbe]) -> [String] {
        probes.map { probe in
            let plan = flags(probe.plan, items: nil).map(JobSummary.shellQuoted).joined(separator: " ")
            return "  probe: \(plan): page 2 (\(probe.url)): \(probe.outcome)\(probe.accepted ? " (taken)" : "")"
        }
    }

    static func say(_ probes: [DetectionProbe]) {
        guard !probes.isEmpty else { return }
        let text = probeLines(probes).joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(TerminalText.safe(text).utf8))
    }

    /// The `detected:` line, first on stderr.
    static func say(
        _ settings: [PaginationDetection.Setting], items: JSONKeyPath, url: String, single: Bool, from: String?
    ) {
        // A connection's items follow from it (nodes, or each edge's node): --items would read the edges whole,
        // and the GraphQL flags take the query, not -d/--json.
        let graphQL = settings.contains { $0.name == "graphql_connection" }
        let flags = flags(settings, items: graphQL ? nil : items).map(JobSummary.shellQuoted).joined(separator: " ")
        var origin = "from the first page of \(url)"
        if let from { origin = "\(from), detected from the first page of \(url)" }
        if single { origin += "; it is a single page: nothing in it points at another page" }
        if graphQL {
            origin += "; to pin it, give the body's query as --graphql-query and its variables as --graphql-variables"
                + " instead of -d/--json"
        }
        let line = "detected: \(flags) (\(origin))\n"
        FileHandle.standardError.write(Data(TerminalText.safe(line).utf8))
    }

    /// The job-file snippet of a detected plan (`--detect`), on stdout.
    static func snippet(_ settings: [PaginationDetection.Setting], items: JSONKeyPath, source: JobSource) -> String {
        // C1 controls (U+0080-U+009F; U+009B is CSI) are escaped as C0 ones are: the snippet reaches a terminal.
        func quoted(_ text: String) -> String {
            TerminalText.escapingC1(String(decoding: JSONValue.string(text).json, as: UTF8.self))
        }
        var paginate = ""
        if let spec = settings.first(where: { $0.name == "paginate" })?.value {
            let options = settings.filter { $0.name != "paginate" }
            if options.isEmpty {
                paginate = quoted(spec)
            } else {
                let name = String(spec.prefix { $0 != ":" })
                var members = ["style: \(name)"]
                if spec.contains(":") {
                    members.append("\(name): \(quoted(String(spec.drop { $0 != ":" }.dropFirst())))")
                }
                members += options.map { "\($0.name): \(quoted($0.value))" }
                paginate = "{" + members.joined(separator: ", ") + "}"
            }
        }
        var lines = ["sources:", "  - name: \(quoted(source.name))", "    url: \(quoted(source.url))"]
        if let connection = settings.first(where: { $0.name == "graphql_connection" })?.value,
            let body = source.body,
            case .object(let members)? = try? JSONItemDecoder().decode(JSONValue.self, from: Array(body.utf8)),
            case .string(let query)? = members["query"]
        {
            // The body was a GraphQL query: a graphql: source sends it (POST, JSON) and takes the connection's
            // items as the walk did.
            lines.append("    graphql:")
            lines.append("      query: \(quoted(Self.spacedBraces(query)))")
            if case .object(let variables)? = members["variables"], !variables.isEmpty {
                let json = String(decoding: JSONValue.object(variables).json, as: UTF8.self)
                lines.append("      variables: \(TerminalText.escapingC1(json))")
            }
            lines.append("      connection: \(quoted(connection))")
            return lines.joined(separator: "\n")
        }
        if !paginate.isEmpty { lines.append("    paginate: \(paginate)") }
        lines.append("    items: \(quoted(items.description))")
        return lines.joined(separator: "\n")
    }

    static func stored(_ detection: PaginationDetection, source: JobSource) -> Stored {
        Stored(
            name: source.name, url: Redaction.url(source.url, names: Redaction.defaultQueryNames),
            urlSHA256: digest(source.url), settings: detection.settings.map { [$0.name, $0.value] },
            items: detection.items.description, reads: detection.readsPath?.description,
            singlePage: detection.isSinglePage)
    }

    static func digest(_ url: String) -> String {
        var hasher = SHA256()
        hasher.update(Array(url.utf8))
        return hasher.hexDigest()
    }

    static func store(_ plans: [Stored], in directory: String) {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let data = try? JSONEncoder().encode(plans) else { return }
        try? data.write(to: URL(fileURLWithPath: directory + "/" + planFile), options: .atomic)
    }

    static func load(_ directory: String) -> [Stored]? {
        let path = directory + "/" + planFile
        guard let data = (try? DurableFiles.read(path, limit: 1 << 20)).map({ Data($0) }) else {
            return nil
        }
        return try? JSONDecoder().decode([Stored].self, from: data)
    }

    /// The style and items of a stored plan.
    static func style(_ stored: Stored) throws -> (PaginationStyle, JSONKeyPath) {
        var options = PaginationOptions()
        var spec = "link"
        for pair in stored.settings where pair.count == 2 {
            let value = pair[1]
            switch pair[0] {
            case "paginate": spec = value
            case "param": options.param = value
            case "cursor_param": options.cursorParam = value
            case "limit_param": options.limitParam = value
            case "limit": options.limit = Int(value)
            case "total": options.totalItems = JSONKeyPath(value)
            case "total_pages": options.totalPages = JSONKeyPath(value)
            case "start": options.start = Int(value)
            case "graphql_connection":
                var style = PaginationStyle.graphQL(connection: JSONKeyPath(value))
                style.expectedPath = stored.reads.map { JSONKeyPath($0) }
                return (style, JSONKeyPath(stored.items))
            default: break
            }
        }
        do {
            var style = try PaginationStyle.parse(spec, options: options)
            style.expectedPath = stored.reads.map { JSONKeyPath($0) }
            return (style, JSONKeyPath(stored.items))
        } catch {
            throw CLIFailure(
                "error: the stored plan (\(planFile)) cannot be used: \(error); pass --restart to detect it again")
        }
    }
}

extension Fetch {
    /// The job file argument, unless it is a URL.
    var jobFilePath: String? {
        guard let jobFile, !Self.isURL(jobFile) else { return nil }
        return jobFile
    }

    /// The one source's URL: `--url`, or the argument when it is one.
    var sourceURL: String? { url ?? jobFile.flatMap { Self.isURL($0) ? $0 : nil } }

    static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// `--paginate` absent or `auto`.
    var detectsPagination: Bool { pagination.paginate.map { $0.lowercased() == "auto" } ?? true }

    /// `--items` absent or `auto`.
    var detectsItems: Bool { items.map { $0.lowercased() == "auto" } ?? true }

    var detector: FetchDetection {
        FetchDetection(
            settings: JobSettings(), cursorParam: pagination.cursorParam,
            maxPageBytes: maxPageBytes.map { max(1, $0) } ?? 64 << 20, environment: ProcessInfo.processInfo.environment)
    }
}
