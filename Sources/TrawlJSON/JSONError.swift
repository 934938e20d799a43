/// Why a JSON document could not be read, and where.
///
/// `message` says what went wrong, with a diagnosis for the common cases; the other properties
/// say where. `description` puts them on one line:
///
/// ```swift
/// do {
///     try extractor.feed(body)
///     _ = try extractor.finish()
/// } catch let error as JSONError where error.code == .truncated {
///     print(error)   // response ended early (truncated at byte 1024) at byte 1024, line 1, ...
/// }
/// ```
///
/// Elements completed before the error have already been handed out when it is thrown.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, for code that reacts to some of them.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The bytes are not JSON (a syntax error reported by the parser).
        public static let syntax = Code("syntax")
        /// The document ended before its value was complete.
        public static let truncated = Code("truncated")
        /// The body holds no JSON value at all.
        public static let empty = Code("empty")
        /// The body is an HTML page.
        public static let html = Code("html")
        /// The body starts with a UTF-8 byte order mark, which JSON forbids.
        public static let byteOrderMark = Code("byteOrderMark")
        /// The bytes are not valid UTF-8, or a `\u` escape is a lone surrogate.
        public static let invalidUTF8 = Code("invalidUTF8")
        /// More data follows the end of the document.
        public static let trailingData = Code("trailingData")
        /// Containers are nested deeper than `JSONLimits.maxDepth`.
        public static let tooDeep = Code("tooDeep")
        /// A token, element or captured field is larger than its limit in `JSONLimits`.
        public static let tooLarge = Code("tooLarge")
        /// A key path given to the extractor cannot be used.
        public static let invalidKeyPath = Code("invalidKeyPath")
        /// The document holds the value at the key path twice (a duplicated key on the path): the elements of both
        /// would be mixed, so the document is refused at the second one.
        public static let duplicateKey = Code("duplicateKey")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, e.g. `"nesting deeper than 512"`.
    public var message: String
    /// The offset from the start of the document of the byte where the error was found.
    public var byteOffset: Int?
    /// The 1-based line of `byteOffset`.
    public var line: Int?
    /// The 1-based column of `byteOffset`, in bytes.
    public var column: Int?
    /// Where in the document the parser was, as a key path such as `items.3.name`.
    public var keyPath: String?
    /// The text around `byteOffset`, with `>>` marking the position.
    public var excerpt: String?

    /// Creates an error; the extractor fills in every field it knows.
    public init(
        code: Code, message: String, byteOffset: Int? = nil, line: Int? = nil, column: Int? = nil,
        keyPath: String? = nil, excerpt: String? = nil
    ) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.excerpt = excerpt
    }

    /// One line: the message, then where: `at byte 5, line 1, column 6, in items.1, near: [1,2 >>3]`.
    public var description: String {
        var parts: [String] = []
        if let byteOffset { parts.append("at byte \(byteOffset)") }
        if let line, let column { parts.append("line \(line), column \(column)") }
        if let keyPath { parts.append("in \(keyPath)") }
        if let excerpt { parts.append("near: \(excerpt)") }
        return parts.isEmpty ? message : message + " " + parts.joined(separator: ", ")
    }
}
