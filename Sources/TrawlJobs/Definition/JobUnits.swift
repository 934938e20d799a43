import Trawl
import TrawlEngine

extension Job {
    /// The work units, in order: sources in order, each expanded to the cartesian product of its matrix axes
    /// (the first axis outermost; a source without a matrix is one unit).
    ///
    /// ```swift
    /// let units = try job.units(environment: ProcessInfo.processInfo.environment)
    /// units[0].id                  // "repos org=apple day=2024-01-01"
    /// units[0].parameters          // org=apple, day=2024-01-01, day.end=2024-01-07
    /// units[0].request.url         // "https://api.github.com/orgs/apple/repos?since=2024-01-01"
    /// ```
    ///
    /// Matrix values are percent-encoded where they land in the URL and substituted as they are in headers and
    /// bodies; `${NAME}` values are substituted as they are everywhere. A body whose first character is `{` or
    /// `[` is sent as `application/json` unless a `Content-Type` header says otherwise.
    ///
    /// Throws `JobSpecError` when a template names an unknown parameter, an environment variable is not set,
    /// source names repeat, or two units would have the same id.
    public func units(environment: [String: String]) throws(JobSpecError) -> [WorkUnit] {
        try validate()
        try checkUnitCount()
        var units: [WorkUnit] = []
        var ids: Set<String> = []
        for (sourceIndex, source) in sources.enumerated() where source.parent == nil {
            let field = "sources[\(sourceIndex)]"
            let templates = try source.templates(field: field)
            let auth = try source.resolvedAuth(settings: settings, environment: environment, field: field)
            for combination in source.combinations() {
                var parameters: [MatrixBinding] = []
                var id = source.name
                for (axis, value) in zip(source.matrix, combination) {
                    parameters.append(MatrixBinding(name: axis.name, value: value.value))
                    for extra in value.extra {
                        parameters.append(MatrixBinding(name: "\(axis.name).\(extra.name)", value: extra.value))
                    }
                    id += " \(axis.name)=\(value.value)"
                }
                guard ids.insert(id).inserted else {
                    throw JobSpecError(
                        field: "\(field).matrix", "two units have the id '\(id)'",
                        hint: "make the values of each axis distinct")
                }
                let bound = Dictionary(parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
                let request = try templates.request(
                    method: source.method, parameters: bound, environment: environment, field: field)
                if source.pagination.inBody, !request.hasJSONObjectBody {
                    let key = source.pagination.graphQLConnection == nil ? "body" : "graphql.variables"
                    throw JobSpecError(
                        field: "\(field).\(key)", "the request body of unit '\(id)' is not a JSON object, and its "
                            + "pagination sets the position in the body",
                        hint: "give a JSON object body, as in body: '{\"page\": {\"size\": 100}}', or page in the query")
                }
                units.append(WorkUnit(
                    sourceIndex: sourceIndex, source: source.name, ordinal: units.count, parameters: parameters, id: id,
                    request: request, pagination: source.pagination, items: source.items, side: source.side,
                    maxItems: source.maxItems, maxPages: source.maxPages,
                    tls: settings.tls.overlaid(with: source.tls ?? TLSSettings()).options))
                (units[units.count - 1].incremental, units[units.count - 1].primaryKey) =
                    (source.incremental, source.primaryKey)
                units[units.count - 1].auth = auth
                units[units.count - 1].itemMember = source.itemMember
            }
        }
        return units
    }

    /// Checks what does not need the environment: unique, non-empty source names, sane axes and templates that
    /// name only parameters their source defines.
    ///
    /// ```swift
    /// try job.validate()   // throws JobSpecError: "sources[1].name: 'repos' is used by sources[0] too (…)"
    /// ```
    public func validate() throws(JobSpecError) {
        guard !sources.isEmpty else {
            throw JobSpecError(field: "sources", "the job has no sources", hint: "add at least one source")
        }
        var names: [String: Int] = [:]
        for (index, source) in sources.enumerated() {
            let field = "sources[\(index)]"
            try SourceName.check(source.name, field: "\(field).name")
            // Case folded: on a case-insensitive file system `Repos.jsonl` and `repos.jsonl` are one file.
            let key = source.name.lowercased()
            if let earlier = names[key] {
                let other = sources[earlier].name
                throw JobSpecError(
                    code: .sourceName, field: "\(field).name",
                    other == source.name
                        ? "'\(source.name)' is used by sources[\(earlier)] too"
                        : "'\(source.name)' and sources[\(earlier)] '\(other)' differ only in case",
                    hint: "source names must be unique, also ignoring case: they name the output files")
            }
            names[key] = index
            for (key, value) in [("max_items", source.maxItems), ("max_pages", source.maxPages)] {
                if let value, value < 1 {
                    throw JobSpecError(
                        field: "\(field).\(key)", "\(key) must be at least 1, not \(value)",
                        hint: "leave it out for no cap")
                }
            }
            try source.validateMatrix(field: field)
            try source.incremental?.validate(field: "\(field).incremental")
            _ = try source.templates(field: field)
        }
        try validateParents()
    }
}

extension JobSource {
    struct Templates {
        var url: JobTemplate
        var headers: [(name: String, value: JobTemplate)]
        var body: JobTemplate?

        var all: [(field: String, template: JobTemplate)] {
            [("url", url)] + headers.map { ("headers.\($0.name)", $0.value) } + (body.map { [("body", $0)] } ?? [])
        }

        func request(method: HTTPMethod, parameters: [String: String], environment: [String: String], field: String)
            throws(JobSpecError) -> Request
        {
            func expand(_ template: JobTemplate, _ part: JobSpecError.RequestPart) throws(JobSpecError) -> String {
                do {
                    return try template.expand(
                        parameters: parameters, environment: environment, encodingParameters: part == .url)
                } catch {
                    var error = error
                    error.field = "\(field).\(part.fieldName)"
                    error.part = part
                    throw error
                }
            }
            var fields: [(String, String)] = []
            for header in headers {
                let value = try expand(header.value, .header(header.name))
                // A variable or a parameter may bring in what the job file could not hold: refused before a request.
                if let problem = HeaderCheck.problem(name: header.name, value: value) {
                    var error = JobSpecError(field: "\(field).headers.\(header.name)", problem)
                    error.part = .header(header.name)
                    throw error
                }
                fields.append((header.name, value))
            }
            let headers = HTTPHeaders(fields)
            var requestBody: RequestBody?
            if let body {
                let text = try expand(body, .body)
                let first = text.first { !$0.isWhitespace }
                let json = (first == "{" || first == "[") && headers["Content-Type"] == nil
                requestBody = .string(text, contentType: json ? "application/json" : nil)
            }
            var request = Request(
                url: try expand(url, .url), method: method, headers: headers, body: requestBody)
            // A value that came from a secret is a credential whatever its header's name: it is stripped on the way
            // to another origin like Authorization; a body holding one is never sent there.
            for header in self.headers where !header.value.environmentNames.isEmpty {
                request.sensitiveHeaders.insert(header.name)
            }
            request.bodyHoldsSecret = body.map { !$0.environmentNames.isEmpty } ?? false
            return request
        }
    }

    /// The parameters templates may name: each axis, and `axis.NAME` for extras every value of the axis has.
    var parameterNames: [String] {
        matrix.flatMap { axis -> [String] in
            [axis.name] + axis.values.sharedExtraNames.map { "\(axis.name).\($0)" }
        }
    }

    /// Parses the templates and checks that they name only defined parameters.
    func templates(field: String) throws(JobSpecError) -> Templates {
        func parse(_ text: String, _ part: JobSpecError.RequestPart) throws(JobSpecError) -> JobTemplate {
            do {
                return try JobTemplate(parsing: text)
            } catch {
                var error = error
                error.field = "\(field).\(part.fieldName)"
                error.part = part
                throw error
            }
        }
        var headers: [(name: String, value: JobTemplate)] = []
        for header in self.headers {
            headers.append((header.name, try parse(header.value, .header(header.name))))
        }
        var templates = Templates(
            url: try parse(url, .url), headers: headers, body: try body.map { text throws(JobSpecError) in
                try parse(text, .body)
            })
        let known = Set(parameterNames)
        if bracesOutsideMatrixAreText {
            let isKnown = { (name: String) in known.contains(name) || self.isParentParameter(name) }
            templates.headers = templates.headers.map { ($0.name, $0.value.literalizing(unless: isKnown)) }
            templates.body = templates.body?.literalizing(unless: isKnown)
        }
        let parts: [(JobSpecError.RequestPart, JobTemplate)] =
            [(.url, templates.url)] + templates.headers.map { (.header($0.name), $0.value) }
            + (templates.body.map { [(.body, $0)] } ?? [])
        for (part, template) in parts {
            for parameter in template.parameters where !known.contains(parameter) && !isParentParameter(parameter) {
                let hint =
                    matrix.isEmpty
                    ? "this source has no matrix; define the axis under matrix:"
                    : "parameters here: \(parameterNames.joined(separator: ", "))"
                var error = JobSpecError(
                    code: .unknownParameter, field: "\(field).\(part.fieldName)",
                    "'{\(parameter)}' names no matrix parameter", hint: hint)
                error.parameter = parameter
                error.part = part
                throw error
            }
        }
        // An axis no template uses would repeat the same request once per value: every item written N times.
        let used = Set(templates.all.flatMap(\.template.parameters).map { $0.prefix { $0 != "." } }.map(String.init))
        for axis in matrix where !used.contains(axis.name) {
            throw JobSpecError(
                field: "\(field).matrix.\(axis.name)", "no template uses the axis '\(axis.name)'",
                hint: "put {\(axis.name)} in the url (or a header or the body), or remove the axis: each of its "
                    + "values would fetch the same pages again")
        }
        return templates
    }

    func validateMatrix(field: String) throws(JobSpecError) {
        var names: Set<String> = []
        for axis in matrix {
            let axisField = "\(field).matrix.\(axis.name)"
            guard JobTemplate.isIdentifier(axis.name) else {
                throw JobSpecError(
                    field: axisField, "'\(axis.name)' is not a usable parameter name",
                    hint: "use letters, digits and _, starting with a letter or _")
            }
            guard names.insert(axis.name).inserted else {
                throw JobSpecError(field: axisField, "the axis is defined twice")
            }
            guard !axis.values.isEmpty else {
                throw JobSpecError(field: axisField, "the axis has no values", hint: "give at least one value")
            }
            if let value = axis.values.firstRepeatedValue {
                throw JobSpecError(
                    field: axisField, "the value '\(value)' appears twice",
                    hint: "each value makes one unit; list it once")
            }
        }
    }

    /// Each combination of axis values, the first axis outermost.
    func combinations() -> [[MatrixValue]] {
        guard !matrix.isEmpty else { return [[]] }
        var result: [[MatrixValue]] = [[]]
        for axis in matrix {
            result = result.flatMap { prefix in axis.values.map { prefix + [$0] } }
        }
        return result
    }
}

extension Job {
    /// The most units a job may expand to: each unit is held in memory (and in the checkpoint).
    static let maxUnits = 1_000_000

    /// Fails before anything is built when the matrices expand to more than ``maxUnits`` units (each axis may be
    /// within its own limit while their product is not: 1,000 × 1,000 × 1,000 is a billion units).
    func checkUnitCount() throws(JobSpecError) {
        var total = 0
        for (index, source) in sources.enumerated() {
            var product = 1
            for axis in source.matrix {
                let (next, overflow) = product.multipliedReportingOverflow(by: max(1, axis.values.count))
                product = overflow ? Int.max : next
            }
            let (sum, overflow) = total.addingReportingOverflow(product)
            total = overflow ? Int.max : sum
            guard product <= Self.maxUnits, total <= Self.maxUnits else {
                let axes = source.matrix.map { "\($0.name): \($0.values.count)" }.joined(separator: " × ")
                let count = product == Int.max ? "more than \(Int.max)" : "\(product)"
                throw JobSpecError(
                    field: "sources[\(index)].matrix",
                    "the matrix expands to \(count) units (\(axes))\(product < total ? ", \(total) in the job" : ""), "
                        + "more than the \(Self.maxUnits) a job may have",
                    hint: "split the job, or use fewer or coarser axis values")
            }
        }
    }
}
