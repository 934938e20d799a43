import Foundation
import Trawl
import TrawlEngine
import TrawlJSON
import Yams

extension Job {
    /// Reads a job file (YAML or JSON).
    ///
    /// ```swift
    /// let job = try Job.load(contentsOf: "jobs.yaml", environment: ProcessInfo.processInfo.environment)
    /// ```
    ///
    /// `environment` is only checked: every `${NAME}` must be set in it. The job keeps the templates, never
    /// the values. Throws `JobFileError`.
    public static func load(contentsOf path: String, environment: [String: String]) throws(JobFileError) -> Job {
        let data = try JobFileReading.read(path)
        guard let text = String(data: data, encoding: .utf8) else {
            throw JobFileError(file: path, message: "the job file is not UTF-8 text")
        }
        return try parse(text, file: path, environment: environment)
    }

    /// Parses the text of a job file; `file` names it in errors.
    ///
    /// ```yaml
    /// settings:                # all optional
    ///   concurrency: 16
    ///   per_host: 8
    ///   rate: 10               # requests per second per host
    ///   attempts: 5
    ///   backoff_ms: 250
    ///   max_backoff_ms: 30000
    ///   max_wait_s: 120
    ///   timeout_s: 60
    ///   trusted_origins: [https://cdn.example.com]   # may receive credentials when a next link names them
    ///   sensitive_headers: [X-Tenant-Key]             # stripped across origins and redacted, like Authorization
    ///   stop_on_status: [404]                         # ends a walk cleanly after its first page (DRF's end)
    ///   allow_short: true      # fewer items than the server announced is no failure (a search API's cap)
    ///   allow_drift: true      # keys that repeat or go missing (data changing under a primary_key walk) exit 0
    ///   connect_timeout_s: 10
    ///   http: "2"              # "1.1", "2" (offered over https, the default) or "2-prior-knowledge"
    ///   tls: {ca_file: ca.pem, ca_path: certs/, cert: client.pem, key: client.key, insecure: false}
    /// sources:
    ///   - name: repos
    ///     url: "https://api.github.com/orgs/{org}/repos?per_page=100&since={day}"
    ///     method: GET                          # optional
    ///     headers: {Authorization: "Bearer ${GITHUB_TOKEN}", Accept: application/json}
    ///     body: '{"q":"{org}"}'                # optional
    ///     paginate: link                       # or page, offset, cursor:KEYPATH, next:KEYPATH, or a mapping
    ///     items: $                             # key path of the items; "" or $ for a bare array
    ///     side: [total_count]                  # optional
    ///     max_items: 1000                      # optional caps on each unit's walk (a search API's result cap)
    ///     max_pages: 10
    ///     tls: {cert: client.pem, key: client.key}   # optional; over settings.tls key by key
    ///     matrix:                              # optional; the first axis is outermost
    ///       org: [apple, swiftlang]
    ///       day: "2024-01-01..2024-12-31 step 7d"
    /// ```
    ///
    /// ```swift
    /// let job = try Job.parse(text, file: "jobs.yaml", environment: ["GITHUB_TOKEN": token])
    /// ```
    public static func parse(_ text: String, file: String = "job.yaml", environment: [String: String])
        throws(JobFileError) -> Job
    {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw JobFileReader.syntaxError(error, file: file)
        } catch {
            throw JobFileError(file: file, message: "cannot parse the job file: \(error)")
        }
        guard let root else {
            throw JobFileError(file: file, message: "the job file is empty", hint: "a job needs sources:")
        }
        return try JobFileReader(file: file, environment: environment).job(root)
    }
}

/// Walks the YAML node tree of a job file, keeping each node's line and column for errors.
struct JobFileReader {
    let file: String
    let environment: [String: String]

    static let jobKeys = ["settings", "sources"]
    static let settingsKeys = [
        "concurrency", "per_host", "rate", "attempts", "backoff_ms", "max_backoff_ms", "max_wait_s", "timeout_s",
        "trusted_origins", "sensitive_headers", "stop_on_status", "allow_short", "allow_drift",
        "connect_timeout_s", "tls", "http", "auth", "cache", "on_not_modified",
    ] + clusterSettingsKeys
    static let sourceKeys = [
        "name", "url", "method", "headers", "body", "paginate", "items", "side", "matrix", "max_items", "max_pages",
        "tls", "auth", "incremental", "primary_key", "parent", "include_from_parent", "graphql",
    ]

    func job(_ root: Node) throws(JobFileError) -> Job {
        let fields = try mapping(root, "", allowed: Self.jobKeys)
        var settings = JobSettings()
        if let node = fields["settings"]?.value { settings = try self.settings(node) }
        guard let sourcesNode = fields["sources"]?.value else {
            throw error(root, nil, "the job has no sources", hint: "add sources: with at least one source")
        }
        let items = try sequence(sourcesNode, "sources")
        guard !items.isEmpty else {
            throw error(sourcesNode, "sources", "the job has no sources", hint: "add at least one source")
        }
        var sources: [JobSource] = []
        var names: [String: Int] = [:]
        for (index, node) in items.enumerated() {
            let (source, nameNode) = try self.source(node, "sources[\(index)]")
            if let earlier = names[source.name] {
                var clash = error(
                    nameNode, "sources[\(index)].name", "'\(source.name)' is used by sources[\(earlier)] too",
                    hint: "source names must be unique: they name the output files")
                clash.code = .sourceName
                throw clash
            }
            names[source.name] = index
            sources.append(source)
        }
        let job = Job(sources: sources, settings: settings)
        do {
            try job.validate()
        } catch {
            throw JobFileError(
                file: file, field: error.field, message: error.message, hint: error.hint, code: error.code)
        }
        return job
    }

    // MARK: Settings

    func settings(_ node: Node) throws(JobFileError) -> JobSettings {
        var settings = JobSettings()
        for (key, entry) in try mapping(node, "settings", allowed: Self.settingsKeys) {
            let field = "settings.\(key)"
            let value = entry.value
            switch key {
            case "concurrency": settings.concurrency = try int(value, field, minimum: 1)
            case "per_host": settings.perHost = try int(value, field, minimum: 1)
            case "rate":
                let rate = try number(value, field)
                guard rate > 0 else {
                    throw error(value, field, "the rate must be above 0", hint: "leave rate out for no limit")
                }
                settings.ratePerHost = rate
            case "attempts": settings.attempts = try int(value, field, minimum: 1)
            case "backoff_ms": settings.backoff = .milliseconds(try int(value, field, minimum: 0))
            case "max_backoff_ms": settings.maxBackoff = .milliseconds(try int(value, field, minimum: 0))
            case "max_wait_s": settings.maxWait = try seconds(value, field, positive: false)
            case "trusted_origins":
                for (index, item) in try sequence(value, field).enumerated() {
                    let origin = try string(item, "\(field)[\(index)]")
                    guard origin.hasPrefix("https://") || origin.hasPrefix("http://") else {
                        throw error(
                            item, "\(field)[\(index)]", "'\(origin)' is not an http:// or https:// origin",
                            hint: "write the origin as a URL, e.g. https://cdn.example.com")
                    }
                    settings.trustedOrigins.append(origin)
                }
            case "sensitive_headers":
                for (index, item) in try sequence(value, field).enumerated() {
                    settings.sensitiveHeaders.insert(try string(item, "\(field)[\(index)]").lowercased())
                }
            case "stop_on_status":
                for (index, item) in try sequence(value, field).enumerated() {
                    let status = try int(item, "\(field)[\(index)]", minimum: 100)
                    guard status <= 599 else {
                        throw error(item, "\(field)[\(index)]", "\(status) is not an HTTP status", hint: nil)
                    }
                    settings.stopStatuses.insert(status)
                }
            case "allow_short":
                guard value.tagName == .bool, let flag = value.bool else {
                    throw error(value, field, "expected true or false, found \(kind(value))")
                }
                settings.allowShort = flag
            case "allow_drift":
                guard value.tagName == .bool, let flag = value.bool else {
                    throw error(value, field, "expected true or false, found \(kind(value))")
                }
                settings.allowDrift = flag
            case "connect_timeout_s": settings.connectTimeout = try seconds(value, field, positive: true)
            case "tls": settings.tls = try tls(value, field)
            case "http": settings.http = try http(value, field)
            case "auth": settings.auth = try auth(value, field)
            case _ where Self.clusterSettingsKeys.contains(key): try clusterSetting(key, value, into: &settings)
            case "cache", "on_not_modified": try cacheSetting(key, value, field, into: &settings)
            default: settings.timeout = try seconds(value, field, positive: true)
            }
        }
        return settings
    }

    // MARK: Sources

    func source(_ node: Node, _ field: String) throws(JobFileError) -> (JobSource, Node) {
        let fields = try mapping(node, field, allowed: Self.sourceKeys)
        func required(_ key: String, _ example: String) throws(JobFileError) -> Node {
            guard let value = fields[key]?.value else {
                throw error(node, field, "\(key) is missing", hint: "add \(key):, as in \(key): \(example)")
            }
            return value
        }
        let nameNode = try required("name", "repos")
        // A source name names files: every mistake in it is a `.sourceName` one.
        let name: String
        do {
            name = try string(nameNode, "\(field).name")
        } catch {
            var mistake = error
            mistake.code = .sourceName
            throw mistake
        }
        guard !name.isEmpty else {
            throw error(nameNode, "\(field).name", "the name is empty", hint: "name each source", code: .sourceName)
        }
        let urlNode = try required("url", "\"https://api.example.com/items\"")
        let url = try string(urlNode, "\(field).url")
        guard !url.isEmpty else {
            throw error(urlNode, "\(field).url", "the URL is empty", hint: "give the first page's URL, as in url: "
                + "\"https://api.example.com/items\"")
        }
        if url.utf8.count > URLCheck.maxLength {
            throw error(urlNode, "\(field).url", "the URL is \(url.utf8.count) bytes long, over the limit of "
                + "\(URLCheck.maxLength) bytes", hint: "send long parameters in the body instead of the query")
        }
        // A URL that can never be sent is refused now, naming the field, not at each of its pages.
        if let bad = HeaderCheck.controlCharacter(in: url) {
            var refusal = error(
                urlNode, "\(field).url", "the URL contains control character \(bad)", hint: "percent-encode it")
            refusal.code = .neverSendable
            throw refusal
        }
        if let space = url.utf8.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) {
            let offset = url.utf8.distance(from: url.utf8.startIndex, to: space)
            var refusal = error(
                urlNode, "\(field).url", "the URL contains \(url.utf8[space] == 0x20 ? "a space" : "a tab") at byte "
                    + "\(offset)", hint: "percent-encode it (a space is %20)")
            refusal.code = .neverSendable
            throw refusal
        }
        var method = HTTPMethod.get
        if let node = fields["method"]?.value {
            let text = try string(node, "\(field).method")
            // A token only: libcurl writes the method into the request line as given (CR/LF would smuggle).
            guard HTTPMethod.isToken(text) else {
                throw error(
                    node, "\(field).method", "'\(text.debugDescription.dropFirst().dropLast())' is not an HTTP method",
                    hint: "use one token such as GET or POST (letters, digits and !#$%&'*+-.^_`|~)")
            }
            method = HTTPMethod(rawValue: text)
        }
        var headers: [JobHeader] = []
        var headerNodes: [String: Node] = [:]
        if let node = fields["headers"]?.value {
            for (name, entry) in try mapping(node, "\(field).headers", allowed: nil) {
                let value = try string(entry.value, "\(field).headers.\(name)")
                if let problem = HeaderCheck.problem(name: name, value: value) {
                    var refusal = error(
                        entry.key, "\(field).headers.\(name.debugDescription.dropFirst().dropLast())", problem,
                        hint: "a header that can never be sent is refused when the job is read")
                    refusal.code = .neverSendable
                    throw refusal
                }
                headers.append(JobHeader(name: name, value: value))
                headerNodes[name] = entry.value
            }
        }
        var body: String?
        if let node = fields["body"]?.value { body = try string(node, "\(field).body") }
        var graphQL: GraphQLSource?
        if let node = fields["graphql"]?.value {
            // The query is the body and the connection the pagination and items: given twice, one would be ignored.
            for key in ["body", "paginate", "items"] where fields[key] != nil {
                throw error(
                    fields[key]?.key, "\(field).\(key)", "\(key) cannot be given with graphql",
                    hint: "graphql: sends the query as the body and walks its connection; put items under graphql")
            }
            graphQL = try self.graphQL(node, "\(field).graphql")
        }
        let detectsPagination = graphQL == nil && isAuto(fields["paginate"]?.value)
        let detectsItems = graphQL == nil && isAuto(fields["items"]?.value)
        let pagination: PaginationStyle =
            if let graphQL { graphQL.pagination } else if detectsPagination { .link() } else {
                try paginate(try required("paginate", "link"), "\(field).paginate")
            }
        let items: JSONKeyPath =
            if let graphQL { graphQL.items } else if detectsItems { .root } else {
                try keyPath(try required("items", "items"), "\(field).items")
            }
        var side: [JSONKeyPath] = []
        if let node = fields["side"]?.value {
            for (index, entry) in try sequence(node, "\(field).side").enumerated() {
                side.append(try keyPath(entry, "\(field).side[\(index)]"))
            }
        }
        var matrix: [MatrixAxis] = []
        var matrixNodes: [String: Node] = [:]
        if let node = fields["matrix"]?.value {
            for (name, entry) in try mapping(node, "\(field).matrix", allowed: nil) {
                matrix.append(try axis(name, entry.value, "\(field).matrix.\(name)", keyNode: entry.key))
                matrixNodes[name] = entry.key
            }
        }
        var maxItems: Int?
        if let node = fields["max_items"]?.value { maxItems = try int(node, "\(field).max_items", minimum: 1) }
        var maxPages: Int?
        if let node = fields["max_pages"]?.value { maxPages = try int(node, "\(field).max_pages", minimum: 1) }
        var source = JobSource(
            name: name, url: url, method: method, headers: headers, body: body, pagination: pagination, items: items,
            side: side, matrix: matrix, maxItems: maxItems, maxPages: maxPages)
        if let graphQL { source.use(graphQL) } else { try checkBodyPagination(source, fields, node, field) }
        if let node = fields["tls"]?.value { source.tls = try tls(node, "\(field).tls") }
        if let node = fields["auth"]?.value { source.auth = try auth(node, "\(field).auth") }
        source.detectsPagination = detectsPagination
        source.detectsItems = detectsItems
        try incremental(fields, field, into: &source)
        try parentKeys(fields, into: &source, field)

        // Templates and environment, pointing at the node at fault.
        func nodeAt(_ subfield: String?) -> Node {
            guard let subfield else { return node }
            if subfield == "url" { return urlNode }
            if subfield == "body", let body = fields["body"]?.value { return body }
            if subfield == "body", let body = fields["graphql"]?.value { return body }
            if subfield.hasPrefix("headers."), let header = headerNodes[String(subfield.dropFirst(8))] {
                return header
            }
            if subfield.hasPrefix("matrix."), let axis = matrixNodes[String(subfield.dropFirst(7))] { return axis }
            return node
        }
        func relay(_ specError: JobSpecError) -> JobFileError {
            let subfield = specError.field.map { String($0.dropFirst(field.count + 1)) }
            return error(nodeAt(subfield), specError.field ?? field, specError.message, hint: specError.hint,
                code: specError.code)
        }
        do {
            try source.validateMatrix(field: field)
            let templates = try source.templates(field: field)
            for (subfield, template) in templates.all {
                for name in template.environmentNames where environment[name] == nil {
                    throw error(
                        nodeAt(subfield), "\(field).\(subfield)", "environment variable \(name) is not set",
                        hint: "export \(name) before running the job")
                }
            }
        } catch let specError as JobSpecError {
            throw relay(specError)
        } catch let fileError as JobFileError {
            throw fileError
        } catch {
            throw self.error(node, field, "\(error)")
        }
        return (source, nameNode)
    }

    func axis(_ name: String, _ node: Node, _ field: String, keyNode: Node) throws(JobFileError) -> MatrixAxis {
        guard JobTemplate.isIdentifier(name) else {
            throw error(
                keyNode, field, "'\(name)' is not a usable parameter name",
                hint: "use letters, digits and _, starting with a letter or _")
        }
        switch node {
        case .sequence(let values):
            var strings: [String] = []
            for (index, value) in values.enumerated() {
                guard case .scalar(let scalar) = value, value.tagName != .null else {
                    throw error(
                        value, "\(field)[\(index)]", "expected a string or a number",
                        hint: "axis values are scalars, as in [apple, swiftlang]")
                }
                strings.append(scalar.string)
            }
            return MatrixAxis(name: name, values: strings)
        case .scalar(let scalar) where node.tagName == .str && MatrixAxis.looksLikeRange(scalar.string):
            do {
                return try MatrixAxis.range(name, scalar.string)
            } catch {
                throw self.error(node, field, error.message, hint: error.hint, code: error.code)
            }
        default:
            throw error(
                node, field, "expected a list of values or a range",
                hint: "write [a, b], \"2024-01-01..2024-12-31 step 7d\" or \"1..10 step 3\"")
        }
    }

    /// A `paginate:` mapping takes `style` and exactly the options its style takes.
    static let paginateKeys: [String: [String]] = PaginationStyle.optionNames.mapValues { ["style"] + $0 }

    func paginate(_ node: Node, _ field: String) throws(JobFileError) -> PaginationStyle {
        if case .scalar = node {
            let spec = try string(node, field)
            do {
                return try PaginationStyle.parse(spec)
            } catch {
                throw self.error(node, field, error.message, hint: error.hint, code: error.code)
            }
        }
        guard case .mapping(let styleMapping) = node else {
            throw error(
                node, field, "expected a style or a mapping",
                hint: "write paginate: link, or paginate: {style: page, size_param: per_page, size: 100}")
        }
        guard let styleNode = styleMapping["style"] else {
            throw error(node, field, "style is missing", hint: PaginationStyle.styleHint)
        }
        let spec = try string(styleNode, "\(field).style")
        let styleName = String(spec.prefix { $0 != ":" }).lowercased()
        guard let allowed = Self.paginateKeys[styleName] else {
            throw error(styleNode, "\(field).style", "unknown style '\(spec)'", hint: PaginationStyle.styleHint)
        }
        let fields = try mapping(node, field, allowed: allowed)
        var options = PaginationOptions()
        for (key, entry) in fields where key != "style" {
            let value = entry.value
            let subfield = "\(field).\(key)"
            switch key {
            case "param": options.param = try string(value, subfield)
            case "page_param": options.pageParam = try string(value, subfield)
            case "cursor_param": options.cursorParam = try string(value, subfield)
            case "size_param": options.sizeParam = try string(value, subfield)
            case "limit_param": options.limitParam = try string(value, subfield)
            case "start": options.start = try int(value, subfield, minimum: 0)
            case "size": options.size = try int(value, subfield, minimum: 1)
            case "limit": options.limit = try int(value, subfield, minimum: 1)
            case "total_pages": options.totalPages = try keyPath(value, subfield)
            case "total_items": options.totalItems = try keyPath(value, subfield)
            case "total": options.total = try keyPath(value, subfield)
            case "has_more": options.hasMore = try keyPath(value, subfield)
            case "cursor": options.cursorPath = try keyPath(value, subfield)
            case "next": options.nextPath = try keyPath(value, subfield)
            case "in":
                switch try string(value, subfield).lowercased() {
                case "body": options.inBody = true
                case "query": options.inBody = false
                default:
                    throw error(value, subfield, "in must be query or body", hint: "write in: body to page in the JSON body")
                }
            default: options.pages = try pages(value, subfield)
            }
        }
        do {
            return try PaginationStyle.parse(spec, options: options)
        } catch {
            let at = error.option.flatMap { fields[$0]?.key } ?? node
            throw self.error(
                at, error.option.map { "\(field).\($0)" } ?? field, error.message, hint: error.hint, code: error.code)
        }
    }

    func pages(_ node: Node, _ field: String) throws(JobFileError) -> ClosedRange<Int> {
        let text = try string(node, field)
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2, let lower = Int(parts[0].trimmingCharacters(in: .whitespaces)),
            let upper = Int(parts[1].trimmingCharacters(in: .whitespaces)), lower <= upper
        else { throw error(node, field, "'\(text)' is not a page range", hint: "write FIRST..LAST, as in 1..20") }
        return lower...upper
    }
}
