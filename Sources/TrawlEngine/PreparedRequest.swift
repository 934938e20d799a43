import Foundation

/// A request checked and merged with the client's settings, ready for the loop thread.
/// Everything here is computed off the loop thread so the loop only copies values into libcurl.
/// A class: the transfer and the loop pass it around by reference (as a struct, its copies cost a
/// retain/release pair per field, several times per request).
final class PreparedRequest: Sendable {
    let url: String
    let method: HTTPMethod
    /// Final header lines in libcurl's form ("Name: value", or "Name;" for an empty value).
    let headerLines: [String]
    /// The lines are exactly the client's defaults, so the loop can send its prebuilt header list.
    let usesClientHeaderLines: Bool
    let body: RequestBody?
    let timeouts: Timeouts
    /// Body byte limit (decoded); `nil` = unlimited.
    let maxBodySize: Int?
    let origin: Origin
    let onProgress: (@Sendable (TransferProgress) -> Void)?
    /// Whether a 301/302/303/307/308 with a `Location` ends this transfer as a redirect (body discarded).
    let followsRedirects: Bool
    /// Trawl asks for gzip and deflate and decodes them itself (`DecodedBody`).
    let acceptEncoding: Bool
    let maxDecompressionRatio: Int?
    /// The client's `proxy` and `noProxy` (kept as given: what they mean for this URL is worked out only when a
    /// failure must name the proxy, so that no request pays for reading the environment).
    let proxySetting: String?
    let noProxySetting: String?

    /// Checks the URL and headers and merges the client's defaults. Throws before anything is sent.
    init(_ request: Request, client: borrowing ClientDefaults, streaming: Bool) throws {
        guard request.method.isToken else {
            // libcurl sends the method as given: "GET /x HTTP/1.1\r\n…" would smuggle a second request.
            throw TrawlError(
                code: .invalidRequest, message: "the method is not a token",
                hint: "an HTTP method holds only letters, digits and !#$%&'*+-.^_`|~ (GET, POST, PATCH…); "
                    + "nothing was sent",
                method: HTTPMethod.describe(request.method.rawValue), url: request.url)
        }
        if let problem = URLCheck.problem(in: request.url) {
            throw TrawlError(
                code: problem.code, message: problem.message, hint: problem.hint, method: request.method.rawValue,
                url: request.url)
        }
        guard let origin = Origin(url: request.url) else {
            throw TrawlError(
                code: .invalidURL, message: "the URL has no scheme or host", method: request.method.rawValue,
                url: request.url)
        }
        if request.method == .head, request.body != nil {
            throw TrawlError(
                code: .invalidRequest, message: "a HEAD request cannot carry a body",
                method: request.method.rawValue, url: request.url)
        }
        if let invalid = client.invalidDefault {
            throw TrawlError(
                code: .invalidHeader, message: invalid + " (in the client's default headers)",
                remedy: .defaultHeaders, method: request.method.rawValue, url: request.url)
        }
        try HeaderValidation.validate(request.headers, method: request.method.rawValue, url: request.url)
        if !request.removedHeaders.isEmpty {
            var names = HTTPHeaders()
            for name in request.removedHeaders { names.add(name, "") }
            try HeaderValidation.validate(names, method: request.method.rawValue, url: request.url)
        }

        var lines: [String]
        var usesClientLines = false
        let removed = Set(request.removedHeaders.map { $0.lowercased() })
        if request.headers.isEmpty, request.strippedHeaders.isEmpty, removed.isEmpty, request.body?.contentType == nil {
            lines = client.lines
            usesClientLines = true
        } else {
            lines = []
            lines.reserveCapacity(client.lines.count + request.headers.count + 2)
            for (index, field) in client.fields.enumerated()
            where !request.headers.contains(field.name) && !request.strippedHeaders.contains(field.name.lowercased())
                && !removed.contains(field.name.lowercased()) {
                lines.append(client.lines[index])
            }
            // "Name:" tells libcurl not to send its own default for the name either.
            for name in request.removedHeaders.sorted() where !request.headers.contains(name) {
                lines.append("\(name):")
            }
            for (name, value) in request.headers { lines.append(Self.line(name, value)) }
            if let contentType = request.body?.contentType, !request.headers.contains("Content-Type"),
               !client.fields.contains(where: { HTTPHeaders.equalNames($0.name, "Content-Type") }) {
                lines.append(Self.line("Content-Type", contentType))
            }
        }
        // Uploads: no "Expect: 100-continue" round trip.
        if request.body != nil || Self.methodSendsEmptyBody(request.method) {
            lines.append("Expect:")
            usesClientLines = false
        }

        self.url = request.url
        self.method = request.method
        self.headerLines = lines
        self.usesClientHeaderLines = usesClientLines
        self.body = request.body
        self.timeouts = client.configuration.timeouts.applying(request.timeouts)
        self.maxBodySize = request.maxBodySize ?? (streaming ? nil : client.configuration.maxBodySize)
        self.origin = origin
        self.onProgress = request.onProgress
        self.followsRedirects = (request.redirects ?? client.configuration.redirects).follows
        self.acceptEncoding = client.configuration.automaticDecompression && !request.headers.contains("Accept-Encoding")
            && !client.fields.contains { HTTPHeaders.equalNames($0.name, "Accept-Encoding") }
        self.maxDecompressionRatio = client.configuration.maxDecompressionRatio
        self.proxySetting = client.configuration.proxy
        self.noProxySetting = client.configuration.noProxy
    }

    /// libcurl's form of a header line: "Name;" sends an empty value ("Name:" would remove the header).
    static func line(_ name: String, _ value: String) -> String {
        value.isEmpty ? "\(name);" : "\(name): \(value)"
    }

    /// Methods that conventionally carry a body send `Content-Length: 0` when given none.
    static func methodSendsEmptyBody(_ method: HTTPMethod) -> Bool {
        method == .post || method == .put || method == .patch
    }
}

/// The client's default header lines, validated and rendered once when the client is created.
struct ClientDefaults: Sendable {
    let configuration: Client.Configuration
    let fields: [(name: String, value: String)]
    let lines: [String]
    /// Why the defaults are unusable, if they are (reported on every request).
    let invalidDefault: String?

    init(configuration: Client.Configuration) {
        self.configuration = configuration
        var headers = configuration.defaultHeaders
        if !headers.contains("User-Agent") { headers.add("User-Agent", configuration.userAgent) }
        fields = headers.map { ($0.name, $0.value) }
        lines = fields.map { PreparedRequest.line($0.name, $0.value) }
        do {
            try HeaderValidation.validate(headers, method: "", url: "")
            invalidDefault = nil
        } catch let error as TrawlError {
            invalidDefault = error.message
        } catch {
            invalidDefault = "\(error)"
        }
    }
}

/// RFC 9110 field syntax, checked before anything reaches libcurl (which would send CR/LF verbatim).
enum HeaderValidation {
    static func validate(_ headers: HTTPHeaders, method: String, url: String) throws {
        for (name, value) in headers {
            if name.isEmpty || !name.utf8.allSatisfy(isTokenByte) {
                throw TrawlError(
                    code: .invalidHeader,
                    message: "header name \(describe(name)) is not a valid token",
                    hint: "header names may hold only letters, digits and !#$%&'*+-.^_`|~; nothing was sent",
                    method: method, url: url)
            }
            if let bad = firstInvalidCharacter(in: value) {
                // The value is not printed: it may be a credential.
                throw TrawlError(
                    code: .invalidHeader,
                    message: "the value of header '\(name)' contains control character \(bad)",
                    hint: "CR, LF, NUL and other control characters would split or corrupt the request; "
                        + "nothing was sent",
                    method: method, url: url)
            }
        }
    }

    /// The first control character other than horizontal tab, described as `U+000D (CR) at offset 5`.
    static func firstInvalidCharacter(in text: String) -> String? {
        // Fast path first: this runs on every URL and header value.
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        for (offset, byte) in text.utf8.enumerated() where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            let names: [UInt8: String] = [0x00: "NUL", 0x0A: "LF", 0x0D: "CR", 0x7F: "DEL"]
            let hex = String(byte, radix: 16, uppercase: true)
            let label = names[byte].map { " (\($0))" } ?? ""
            return "U+\(String(repeating: "0", count: 4 - hex.count))\(hex)\(label) at byte \(offset)"
        }
        return nil
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func describe(_ name: String) -> String {
        let escaped = name.unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return "'" + escaped.joined() + "'"
    }
}

extension PreparedRequest {
    /// The proxy libcurl goes through for this request (userinfo hidden): the client's `proxy` with its
    /// `noProxy`, else the environment's variables; `nil` when it goes direct.
    var proxyInUse: String? {
        if let proxySetting {
            guard !proxySetting.isEmpty else { return nil }
            return ProxyEnvironment.proxy(
                for: url, environment: ["all_proxy": proxySetting, "no_proxy": noProxySetting ?? ""])
        }
        var environment = ProcessInfo.processInfo.environment
        if let noProxySetting {
            environment["no_proxy"] = noProxySetting
            environment["NO_PROXY"] = nil
        }
        return ProxyEnvironment.proxy(for: url, environment: environment)
    }
}
