import Foundation
import Trawl
import TrawlEngine

extension Get {
    /// The request for one URL: the curl data, headers and method of `curlRequest`, then `-I`, `-e`, `-b`,
    /// `--etag-compare`, `--url-query`, `--data-file`, `-F`, `--max-time`, `--connect-timeout`.
    func requestFor(_ rawURL: String) throws -> Request {
        var url = rawURL
        if !curl.urlQuery.isEmpty { url = try Self.addingQuery(curl.urlQuery, to: url) }
        if let problem = URLCheck.problem(in: url) {
            throw CurlURLProblem(
                code: problem.code == .unsupportedScheme ? CurlExit.unsupportedProtocol : CurlExit.malformedURL,
                message: "\(RequestOption.shown(url)): \(problem.message); \(problem.hint)")
        }
        var request = try curlRequest(url: url)
        if let dataFile { request.body = .file(dataFile) }
        if !form.isEmpty { request.body = try multipartBody() }
        request.method = method.map { HTTPMethod(rawValue: $0) }
            ?? (curl.head ? .head : request.body == nil ? .get : .post)
        if let maxTime { request.timeouts.total = .milliseconds(Int64(maxTime * 1000)) }
        if let connectTimeout { request.timeouts.connect = .milliseconds(Int64(connectTimeout * 1000)) }
        if let referer = curl.referer { request.headers.add("Referer", referer) }
        let cookie = try CookieFile.header(for: curl.cookies, url: url)
        if !cookie.isEmpty, !request.headers.contains("Cookie") { request.headers.add("Cookie", cookie) }
        if let compare = curl.etagCompare {
            request.headers.add("If-None-Match", try Self.savedEtag(compare, saving: curl.etagSave != nil))
        }
        return request
    }

    /// `--url-query`: `name=content` and `content` with the content percent-encoded, `+raw` added as it is.
    static func addingQuery(_ pieces: [String], to url: String) throws -> String {
        var added: [String] = []
        for piece in pieces {
            if piece.hasPrefix("+") {
                added.append(String(piece.dropFirst()))
            } else {
                added.append(String(decoding: try CurlData.urlencoded(piece, readFile: CurlData.read), as: UTF8.self))
            }
        }
        let fragment = url.firstIndex(of: "#")
        let base = fragment.map { String(url[..<$0]) } ?? url
        let joined = added.joined(separator: "&")
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + joined
    }

    /// The ETag saved by `--etag-save` (its first line, at most 4 KiB), or `""` when the file is empty, or
    /// missing while `--etag-save` will write it (curl sends `If-None-Match: ""` then).
    static func savedEtag(_ path: String, saving: Bool) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if saving { return "\"\"" }
            throw CLIFailure("error: --etag-compare: cannot read '\(path)'")
        }
        defer { try? handle.close() }
        let bytes = (try? handle.read(upToCount: 4096)) ?? Data()
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
            ?? ""
        guard !line.isEmpty else { return "\"\"" }
        guard URLCheck.controlCharacter(in: line) == nil else {
            throw CLIFailure("error: --etag-compare: '\(path)' holds control characters, not an ETag")
        }
        return line
    }

    /// `--etag-save FILE`: the response's ETag and a newline (an empty file when it has none), written without
    /// following a link planted at the path.
    func saveEtag(_ head: ResponseHead) throws {
        guard let path = curl.etagSave else { return }
        let etag = head.headers["ETag"].map { $0 + "\n" } ?? ""
        try ReportFile.write(Array(etag.utf8), to: path, flag: "--etag-save")
    }

    /// `-c FILE`: the cookies read by `-b FILE` and those the response set, in the Netscape format curl writes.
    func saveCookies(_ head: ResponseHead, url: String) throws {
        guard let path = curl.cookieJar else { return }
        var jar = try CookieFile.load(curl.cookies.filter { !$0.contains("=") })
        jar.receive(head.headers.values(for: "Set-Cookie"), url: head.url)
        try ReportFile.write(Array(jar.netscapeText.utf8), to: path, flag: "-c")
    }

    /// `-v`: the request head on stderr, as `> ` lines; credentials as `<redacted>`.
    func verboseRequest(_ request: Request) {
        let target = Self.pathAndQuery(request.url)
        var text = "> \(request.method.rawValue) \(target) HTTP/1.1\n"
        for (name, value) in request.headers {
            text += "> \(name): \(Self.shownValue(name, value, request: request))\n"
        }
        FileHandle.standardError.write(Data(TerminalText.safe(text + ">\n").utf8))
    }

    /// `-v`: the response head on stderr, as `< ` lines.
    func verboseResponse(_ head: ResponseHead) {
        var text = "< " + (head.statusLine ?? "\(head.httpVersion.rawValue) \(head.status)") + "\n"
        for (name, value) in head.headers {
            let shown = name.lowercased() == "set-cookie" ? "<redacted>" : value
            text += "< \(name): \(shown)\n"
        }
        FileHandle.standardError.write(Data(TerminalText.safe(text + "<\n").utf8))
    }

    static func shownValue(_ name: String, _ value: String, request: Request) -> String {
        RedirectPolicy.isCredential(name, extra: request.sensitiveHeaders) ? "<redacted>" : value
    }

    static func pathAndQuery(_ url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = rest[slash...].prefix(while: { $0 != "#" })
        return target.hasPrefix("?") ? "/" + target : String(target)
    }
}

/// A URL refused before anything is sent: curl's 3 (malformed) or 1 (unsupported protocol).
struct CurlURLProblem: Error {
    let code: Int32
    let message: String
}
