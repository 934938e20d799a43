import ArgumentParser
import Foundation
import Synchronization
import Trawl
import TrawlEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trawl get URL`: one request; the body streams to stdout or a file, status and errors to stderr.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one request; the body goes to stdout (or -o FILE), errors to stderr.",
        discussion: """
            Redirects are followed (up to 10), with credentials stripped when the host changes. \
            Exit status as curl's: 0 when a response arrived (any status; -f makes 400 and more exit 22), \
            3 malformed URL, 6 cannot resolve, 7 cannot connect, 18 partial body, 23 write error, 26 read error, \
            28 timeout, 35 TLS handshake, 47 too many redirects, 52 empty reply, 56 receive failure, \
            60 peer certificate; 2 bad usage. Options may also come from -K FILE or ~/.curlrc.
            """)

    @Argument(help: "The URL (http or https; without a scheme, http). Several URLs are fetched in turn (-Z: at once).")
    var urls: [String]

    @Option(
        name: [.customShort("X"), .customLong("request")], help: "The method (default GET, or POST with a body).",
        transform: RequestOption.method)
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(
        name: .customLong("sensitive-header"),
        help: "A header that carries a credential (repeatable): removed when a redirect leaves the origin, like Authorization.")
    var sensitiveHeaders: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: """
            Form data (application/x-www-form-urlencoded unless -H sets Content-Type); @FILE or @- reads it, \
            without CR and LF (repeatable: joined with &).
            """)
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: "Like -d, but @FILE is sent exactly as it is (repeatable).")
    var dataBinary: [String] = []

    @Option(
        name: .customLong("data-urlencode"),
        help: "Form data, percent-encoded: 'content', '=content', 'name=content', '@file', 'name@file' (repeatable).")
    var dataURLEncode: [String] = []

    @Option(
        name: .customLong("json"),
        help: "JSON body (@FILE, @- read it); sets Content-Type and Accept to application/json (repeatable).")
    var json: [String] = []

    @Flag(name: [.customShort("G"), .customLong("get")], help: "Put the -d data in the URL's query and send a GET.")
    var dataInQuery = false

    @Option(name: [.customShort("u"), .customLong("user")], help: "Basic authentication 'USER:PASSWORD'.")
    var user: String?

    @Option(name: .customLong("max-redirs"), help: "Follow at most N redirects (default 10; -1 for 50).")
    var maxRedirects: Int?

    @Flag(
        name: [.customShort("L"), .customLong("location")], help: "Follow redirects (the default; accepted as curl's).")
    var location = false

    @Option(name: .customLong("data-file"), help: "Send this file as the body (streamed from disk).")
    var dataFile: String?

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: "Write the body to this file instead of stdout (repeatable: one per URL, in order).")
    var outputs: [String] = []

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Option(
        name: .customLong("max-time"), help: "Total timeout in seconds.",
        transform: { try NumberOption.seconds($0, positive: true) })
    var maxTime: Double?

    @Option(name: .customLong("connect-timeout"), help: "Longest wait for the connection, in seconds.")
    var connectTimeout: Double?

    @OptionGroup(title: "TLS") var tls: TLSFlags

    @OptionGroup(title: "HTTP version") var httpVersion: HTTPVersionFlags
    @OptionGroup var compression: CompressionFlags

    @Option(name: .customLong("limit-rate"), help: "Read the body at most this many bytes/s (the transfer pauses).")
    var limitRate: Int?

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: "A multipart field 'name=value', or a file 'name=@path[;type=MIME][;filename=NAME]' (repeatable).")
    var form: [String] = []

    @Flag(
        name: [.customShort("C"), .customLong("continue")],
        help: "With -o: continue a partial download (Range/If-Range); restarts cleanly if the file changed.")
    var resume = false

    @Option(
        name: .customLong("sha256"),
        help: "With -o: the expected SHA-256 (64 hex digits); a mismatch fails the download and deletes it.")
    var sha256: String?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar and no error message.")
    var silent = false

    @OptionGroup(title: "curl's everyday flags") var curl: CurlFlags

    func validate() throws {
        let curlData = self.curlData
        if !curlData.isEmpty, dataFile != nil {
            throw ValidationError("give either -d (or --data-binary, --data-urlencode, --json) or --data-file")
        }
        if !form.isEmpty, !curlData.isEmpty || dataFile != nil {
            throw ValidationError("give -F or a body (-d/--data-file), not both")
        }
        if !json.isEmpty, !(data.isEmpty && dataBinary.isEmpty && dataURLEncode.isEmpty) {
            throw ValidationError("give --json or -d/--data-binary/--data-urlencode, not both")
        }
        if dataInQuery, !json.isEmpty || dataFile != nil || !form.isEmpty {
            throw ValidationError(
                "-G puts -d, --data-binary and --data-urlencode in the query; it does not take --json, -F or "
                    + "--data-file")
        }
        if let user, !user.contains(":") {
            throw ValidationError("-u '\(user)' has no password: give -u USER:PASSWORD (trawl does not prompt)")
        }
        if let maxRedirects, maxRedirects < -1 {
            throw ValidationError("--max-redirs must be -1 (up to 50) or more, not \(maxRedirects)")
        }
        let files = outputs.filter { $0 != Self.remoteNameMarker }
        if resume || sha256 != nil, files.isEmpty, !curl.remoteName {
            throw ValidationError("--continue and --sha256 need -o FILE")
        }
        if let sha256, !SHA256.isHexDigest(sha256) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits, as sha256sum prints (got '\(sha256)')")
        }
        for output in files {
            if resume, Self.writesInPlace(output) {
                throw ValidationError(
                    "--continue needs -o naming a regular file: '\(output)' is a pipe or a device, written where it is")
            }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
            if output.isEmpty { throw ValidationError("-o needs a file name") }
            if output.hasSuffix("/") || (exists && isDirectory.boolValue) {
                let inside = output.hasSuffix("/") ? output : output + "/"
                throw ValidationError(
                    "-o '\(output)' names a directory: give a file name, for example -o \(inside)NAME")
            }
        }
        if urls.isEmpty { throw ValidationError("no URL given: trawl get URL") }
        if curl.retry < 0 { throw ValidationError("--retry must be 0 or more, not \(curl.retry)") }
        if curl.parallelMax < 1 { throw ValidationError("--parallel-max must be 1 or more") }
        for value in [curl.userAgent, curl.referer].compactMap({ $0 }) + curl.cookies {
            if let bad = URLCheck.controlCharacter(in: value) {
                throw ValidationError("-A, -e and -b values must not contain control character \(bad)")
            }
        }
        for field in form {
            guard let equals = field.firstIndex(of: "=") else {
                throw ValidationError("-F '\(field)' must look like 'name=value' or 'name=@path'")
            }
            let value = field[field.index(after: equals)...]
            // CR or LF in ;type= would end the part's header line and let the value inject headers of its own.
            if value.hasPrefix("@"), let type = FormFile(value.dropFirst()).type,
                type.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
            {
                throw ValidationError(
                    "-F '\(field[..<equals])': ;type= must not contain CR, LF or other control characters")
            }
        }
        try HeaderOption.validate(headers)
        try HeaderOption.validateSensitive(sensitiveHeaders)
        try RequestOption.checkHeaderCharacters(headers)
        try SecondsOption.validate(connectTimeout, flag: "--connect-timeout")
    }

    func run() async throws {
        // A request-data file that cannot be read is a usage error found before anything is sent (curl would send
        // an empty body instead); `@-` is read only when the request is built.
        for piece in data + dataBinary + json where piece.hasPrefix("@") && piece != "@-" {
            _ = try CurlData.read(String(piece.dropFirst()))
        }
        try await runTransfers()
    }
}

extension Get {
    var curlData: CurlData {
        CurlData(data: data, binary: dataBinary, urlencode: dataURLEncode, json: json)
    }

    /// The URL, headers and curl-style data: `-H 'Name:'` removes a default header, `-H 'Name;'` sends it empty;
    /// `-d` data is a form unless `-H` names a Content-Type, `--json` sets both JSON headers; `-G` moves the data
    /// into the query; `-u` sends basic authentication; `--max-redirs` caps the redirects followed.
    func curlRequest(url: String) throws -> Request {
        let bytes = try curlData.bytes()
        var request = Request(url: url)
        if dataInQuery, let bytes {
            let separator = url.contains("?") ? "&" : "?"
            request = Request(url: url + separator + String(decoding: bytes, as: UTF8.self))
        } else if let bytes {
            request.body = .bytes(bytes)
        }
        HeaderOption.apply(headers, to: &request)
        HeaderOption.markSensitive(sensitiveHeaders, in: &request)
        let named = Set(headers.map { HeaderOption.split($0).name.lowercased() })
        if bytes != nil, !dataInQuery, !named.contains("content-type") {
            request.headers.add("Content-Type", json.isEmpty ? "application/x-www-form-urlencoded" : "application/json")
        }
        if !json.isEmpty, !named.contains("accept") { request.headers.add("Accept", "application/json") }
        if let user, !named.contains("authorization") {
            request.headers.add("Authorization", "Basic " + Data(user.utf8).base64EncodedString())
        }
        if let maxRedirects { request.redirects = .follow(max: maxRedirects < 0 ? 50 : maxRedirects) }
        return request
    }

    /// Whether `-o` names something that is written where it is, as curl does (no `.part`, no rename, no
    /// resume): a pipe, a device, a socket (`/dev/null`, a FIFO, `<(…)`), or anything under /dev or /proc
    /// (`/dev/stdout` is a link to whatever stdout is, a regular file included).
    static func writesInPlace(_ output: String) -> Bool {
        if output.hasPrefix("/dev/") || output.hasPrefix("/proc/") { return true }
        var status = stat()
        guard stat(output, &status) == 0 else { return false }
        let kind = status.st_mode & S_IFMT
        return kind != S_IFREG && kind != S_IFDIR
    }

    /// Failures after which the partial file holds good bytes that `--continue` can build on.
    static let leavesResumablePart: Set<TrawlError.Code> = [.truncated, .receiveFailed, .stalled, .timeout]

    /// What happened to a partial file, for stderr (empty for a plain download).
    static func resumeNote(_ result: DownloadResult, output: String) -> String {
        if result.head.status == 416 {
            return "\(output) was already complete: its partial file held all \(result.bytes) bytes (the server"
                + " answered 416 to a range from byte \(result.resumedFrom)); nothing was downloaded\n"
        }
        if result.resumedFrom > 0 { return "resumed at byte \(result.resumedFrom)\n" }
        if result.restarted {
            return "the partial file could not be continued (range ignored or file changed): downloaded again\n"
        }
        return ""
    }

    /// The directory `-o` writes into must exist before anything is sent.
    func checkOutputDirectory(_ output: String) throws {
        let parent = PathName.parent(of: output)
        var isDirectory: ObjCBool = false
        guard parent.isEmpty || FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) else {
            throw CLIFailure("error: cannot write '\(output)': the directory '\(parent)' does not exist")
        }
        guard parent.isEmpty || isDirectory.boolValue else {
            throw CLIFailure("error: cannot write '\(output)': '\(parent)' is not a directory")
        }
    }

    /// `-F name=value` and `-F name=@path;type=…;filename=…`, as curl spells them.
    func multipartBody() throws -> RequestBody {
        var multipart = MultipartForm()
        for field in form {
            guard let equals = field.firstIndex(of: "=") else { continue }   // refused by validate()
            let name = String(field[..<equals])
            let value = String(field[field.index(after: equals)...])
            if value.hasPrefix("@") {
                let file = FormFile(value.dropFirst())
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory) else {
                    throw CLIFailure("error: -F \(name): cannot read '\(file.path)': no such file")
                }
                guard !isDirectory.boolValue else {
                    throw CLIFailure("error: -F \(name): '\(file.path)' is a directory; name a file to upload")
                }
                guard FileManager.default.isReadableFile(atPath: file.path) else {
                    throw CLIFailure("error: -F \(name): cannot read '\(file.path)': permission denied")
                }
                multipart.appendFile(name: name, path: file.path, filename: file.filename, contentType: file.type)
            } else {
                multipart.append(name: name, value: value)
            }
        }
        do {
            return try multipart.requestBody()
        } catch {
            throw CLIFailure("error: cannot build the multipart body: \(error)")
        }
    }
}

/// Sleeps so that bytes consumed stay under a rate: a deliberately slow consumer.
struct RatePacer {
    let bytesPerSecond: Int
    private let start = ContinuousClock.now
    private var total = 0

    init(bytesPerSecond: Int) { self.bytesPerSecond = max(1, bytesPerSecond) }

    mutating func consumed(_ count: Int) async throws {
        total += count
        let due = start + .milliseconds(Int64(Double(total) / Double(bytesPerSecond) * 1000))
        if due > ContinuousClock.now { try await Task.sleep(until: due) }
    }
}
