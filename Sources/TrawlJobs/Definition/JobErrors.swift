/// A mistake in a job definition found without a file at hand: a pagination spec or shard given on the command
/// line, a range, a template, or a `Job` built in code.
///
/// ```swift
/// do {
///     _ = try PaginationStyle.parse("pages")
/// } catch let error as JobSpecError {
///     print(error)   // unknown style 'pages' (use link, page, offset, cursor:KEYPATH or next:KEYPATH)
/// }
/// ```
public struct JobSpecError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The kind of mistake, for a program to branch on (the command-line tool's exit status). New kinds may be
    /// added; compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalid, sourceName, parents, neverSendable, unknownParameter
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// A value the job cannot use (the default).
        public static let invalid = Code(.invalid)
        /// A source name that cannot name an output file, or names the same file as another source's.
        public static let sourceName = Code(.sourceName)
        /// A `parent:` that names no source, the source itself, or a source that has a parent.
        public static let parents = Code(.parents)
        /// A value that can never be sent (a URL with a control character or a space, a header name that is not a
        /// token, a header value with a control character or over `HeaderCheck.longestValue`): `trawl` reports it
        /// as bad usage (exit 2), as it does a bad `-H`.
        public static let neverSendable = Code(.neverSendable)
        /// A `{name}` template that names no matrix axis (nor a parent's field); `parameter` is the name.
        public static let unknownParameter = Code(.unknownParameter)
    }

    public var code: Code
    /// Where the mistake is, as a path (`sources[1].url`), when known.
    public var field: String?
    public var message: String
    /// What to do about it.
    public var hint: String?
    /// For pagination options: the option at fault, spelled as in a job file (`size_param`).
    public var option: String?
    /// With `unknownParameter`: the name between the braces.
    public var parameter: String?
    /// The part of a source's request the mistake is in (a template, or a header a variable made unsendable), for
    /// a caller that names that part its own way: the command line says `-H`, `-d` and the URL.
    public var part: RequestPart?

    /// A part of a source's request.
    public enum RequestPart: Sendable, Hashable {
        case url
        /// The header of this name.
        case header(String)
        case body

        /// Its name under a source in a job file: `url`, `headers.NAME`, `body`.
        var fieldName: String {
            switch self {
            case .url: "url"
            case .header(let name): "headers.\(name)"
            case .body: "body"
            }
        }
    }

    public init(
        code: Code = .invalid, field: String? = nil, _ message: String, hint: String? = nil, option: String? = nil
    ) {
        self.code = code
        self.field = field
        self.message = message
        self.hint = hint
        self.option = option
    }

    public var description: String {
        var text = field.map { "\($0): " } ?? ""
        text += message
        if let hint { text += " (\(hint))" }
        return text
    }
}

/// A mistake in a job file, with where it is.
///
/// ```swift
/// do {
///     let job = try Job.load(contentsOf: "jobs.yaml", environment: ProcessInfo.processInfo.environment)
/// } catch let error as JobFileError {
///     print(error)
///     // jobs.yaml:12:5: sources[1].paginate: unknown style 'pages' (use link, page, offset, …)
/// }
/// ```
public struct JobFileError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The file as it was named to `Job.load` or `Job.parse`.
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column (in Unicode scalars), when known.
    public var column: Int?
    /// The field at fault, as a path: `sources[1].paginate`, `settings.rate`.
    public var field: String?
    public var message: String
    /// What to do about it.
    public var hint: String?
    /// The kind of mistake (``JobSpecError/Code``).
    public var code: JobSpecError.Code

    public init(
        file: String, line: Int? = nil, column: Int? = nil, field: String? = nil, message: String, hint: String? = nil,
        code: JobSpecError.Code = .invalid
    ) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
        self.hint = hint
    }

    /// `file:line:column: field: message (hint)`, leaving out what is unknown.
    public var description: String {
        var text = file
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        text += ": "
        if let field { text += "\(field): " }
        text += message
        if let hint { text += " (\(hint))" }
        return text
    }
}
