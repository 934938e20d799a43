import Foundation
import TrawlEngine

/// Cookies for `-b` and `-c`: a `-b` value with `=` is the Cookie header itself; without, it names a file in
/// the Netscape format (curl's `-c` output: domain, subdomains, path, secure, expiry, name, value, tab
/// separated; `#HttpOnly_` before the domain) or of `Set-Cookie:` lines. A file is read up to 1 MiB.
struct CookieFile {
    struct Cookie: Equatable {
        var domain: String
        var includeSubdomains: Bool
        var path: String
        var secure: Bool
        var expires: Int64
        var name: String
        var value: String
        var httpOnly = false
    }

    var cookies: [Cookie] = []
    static let maxBytes = 1 << 20

    /// The Cookie header value for `url` from every `-b`, `;`-joined.
    static func header(for values: [String], url: String) throws -> String {
        var parts: [String] = []
        for value in values {
            if value.contains("=") {
                parts.append(value)
            } else {
                let jar = try load([value])
                parts += jar.matching(url).map { "\($0.name)=\($0.value)" }
            }
        }
        return parts.joined(separator: "; ")
    }

    /// The cookies of the files named (a missing file is no cookies, as in curl).
    static func load(_ paths: [String]) throws -> CookieFile {
        var jar = CookieFile()
        for path in paths {
            guard let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            let data = (try? handle.read(upToCount: maxBytes + 1)) ?? Data()
            guard data.count <= maxBytes else {
                throw CLIFailure("error: -b: the cookie file '\(path)' is larger than 1 MiB")
            }
            jar.parse(String(decoding: data, as: UTF8.self))
        }
        return jar
    }

    mutating func parse(_ text: String) {
        for raw in text.split(whereSeparator: \.isNewline) {
            var line = String(raw)
            if line.lowercased().hasPrefix("set-cookie:") {
                receive([String(line.dropFirst(11))], url: nil)
                continue
            }
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                line = String(line.dropFirst(10))
                httpOnly = true
            } else if line.hasPrefix("#") {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7, !fields[5].isEmpty,
                fields.allSatisfy({ URLCheck.controlCharacterFree($0) })
            else { continue }
            cookies.append(Cookie(
                domain: fields[0], includeSubdomains: fields[1] == "TRUE", path: fields[2], secure: fields[3] == "TRUE",
                expires: Int64(fields[4]) ?? 0, name: fields[5], value: fields[6], httpOnly: httpOnly))
        }
    }

    /// Adds the `Set-Cookie` values a response from `url` sent (`nil`: lines of a file, for any host).
    mutating func receive(_ values: [String], url: String?) {
        let host = url.flatMap { URLComponents(string: $0)?.host } ?? ""
        for value in values {
            let attributes = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = attributes.first, let equals = pair.firstIndex(of: "="),
                URLCheck.controlCharacterFree(value)
            else { continue }
            var cookie = Cookie(
                domain: host, includeSubdomains: false, path: "/", secure: false, expires: 0,
                name: String(pair[..<equals]), value: String(pair[pair.index(after: equals)...]))
            for attribute in attributes.dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                switch parts[0].lowercased() {
                case "domain" where parts.count == 2:
                    let domain = parts[1].hasPrefix(".") ? String(parts[1].dropFirst()) : parts[1]
                    // A server sets cookies for itself and its parent domains only.
                    if host.isEmpty || host == domain || host.hasSuffix("." + domain) {
                        cookie.domain = domain
                        cookie.includeSubdomains = true
                    }
                case "path" where parts.count == 2: cookie.path = parts[1]
                case "secure": cookie.secure = true
                case "httponly": cookie.httpOnly = true
                case "max-age" where parts.count == 2:
                    cookie.expires = Int64(Date().timeIntervalSince1970) + (Int64(parts[1]) ?? 0)
                default: break
                }
            }
            cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
            cookies.append(cookie)
        }
    }

    /// The cookies a request to `url` carries: domain, path and (for `secure`) https matched; expired left out.
    func matching(_ url: String) -> [Cookie] {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased() else { return [] }
        let path = components.path.isEmpty ? "/" : components.path
        let now = Int64(Date().timeIntervalSince1970)
        return cookies.filter { cookie in
            let domain = cookie.domain.lowercased().drop(while: { $0 == "." })
            let hostMatches = host == domain || (cookie.includeSubdomains && host.hasSuffix("." + domain))
            return hostMatches && path.hasPrefix(cookie.path) && (!cookie.secure || components.scheme == "https")
                && (cookie.expires == 0 || cookie.expires > now)
        }
    }

    /// The jar as curl's `-c` writes it.
    var netscapeText: String {
        var text = "# Netscape HTTP Cookie File\n# https://curl.se/docs/http-cookies.html\n"
            + "# This file was generated by libcurl! Edit at your own risk.\n\n"
        for cookie in cookies {
            text += (cookie.httpOnly ? "#HttpOnly_" : "") + cookie.domain + "\t"
                + (cookie.includeSubdomains ? "TRUE" : "FALSE") + "\t" + cookie.path + "\t"
                + (cookie.secure ? "TRUE" : "FALSE") + "\t" + String(cookie.expires) + "\t" + cookie.name + "\t"
                + cookie.value + "\n"
        }
        return text
    }
}

extension URLCheck {
    static func controlCharacterFree(_ text: String) -> Bool { controlCharacter(in: text) == nil }
}
