import Foundation

/// The command line of `trawl get` read as curl reads its own, before ArgumentParser sees it: short flags
/// combined (`-sSL`, `-sSo FILE`, `-ofile`), `-C -`, a `-K FILE` or `~/.curlrc` config, a URL without a scheme
/// taken as http, and every option checked against the ones `get` knows, so that an unknown option is reported
/// as one (never as "the URL '3' has no scheme" for `--retry 3 URL`).
enum CurlArguments {
    /// A usage error found here: printed with `trawl get`'s usage, exit 2.
    struct Unknown: Error, CustomStringConvertible {
        let description: String
    }

    /// Long options of `trawl get` and whether each takes a value.
    static let long: [String: Bool] = [
        "request": true, "header": true, "sensitive-header": true, "data": true, "data-binary": true,
        "data-urlencode": true, "data-raw": true, "json": true, "get": false, "user": true, "max-redirs": true,
        "location": false, "data-file": true, "output": true, "include": false, "max-time": true,
        "connect-timeout": true, "cacert": true, "capath": true, "insecure": false, "cert": true, "key": true,
        "http1.1": false, "http2": false, "http2-prior-knowledge": false, "compressed": false, "limit-rate": true,
        "form": true, "continue": false, "sha256": true, "silent": false, "show-error": false, "fail": false,
        "fail-with-body": false, "head": false, "verbose": false, "remote-name": false, "remote-header-name": false,
        "output-dir": true, "create-dirs": false, "no-clobber": false, "remove-on-error": false, "proxy": true,
        "proxy-user": true, "noproxy": true, "user-agent": true, "referer": true, "cookie": true,
        "cookie-jar": true, "retry": true, "retry-delay": true, "retry-max-time": true, "retry-all-errors": false,
        "retry-connrefused": false, "write-out": true, "etag-save": true, "etag-compare": true, "url-query": true,
        "parallel": false, "parallel-max": true, "config": true, "url": true, "disable": false, "help": false,
        "location-trusted": false, "globoff": false, "no-progress-meter": false, "progress-bar": false,
        "no-buffer": false, "no-keepalive": false, "tcp-nodelay": false, "path-as-is": false,
    ]

    /// Short options: the long option each stands for.
    static let short: [Character: String] = [
        "X": "request", "H": "header", "d": "data", "G": "get", "u": "user", "L": "location", "o": "output",
        "i": "include", "k": "insecure", "F": "form", "C": "continue", "s": "silent", "S": "show-error",
        "f": "fail", "I": "head", "v": "verbose", "O": "remote-name", "J": "remote-header-name", "x": "proxy",
        "U": "proxy-user", "A": "user-agent", "e": "referer", "b": "cookie", "c": "cookie-jar", "w": "write-out",
        "Z": "parallel", "K": "config", "q": "disable", "h": "help", "m": "max-time", "g": "globoff",
        "N": "no-buffer", "#": "progress-bar",
    ]

    /// Short options passed on as typed (ArgumentParser knows them); the others are spelled long.
    static let keptShort: Set<Character> = [
        "X", "H", "d", "G", "u", "L", "o", "i", "k", "F", "s", "S", "f", "I", "v", "J", "x", "U", "A", "e", "b",
        "c", "w", "Z",
    ]

    /// Options accepted for curl's sake that change nothing here (each says why in `--help` of curl terms):
    /// globbing is never done, progress goes to a bar only on a terminal, output is never buffered.
    static let ignored: Set<String> = [
        "globoff", "no-progress-meter", "progress-bar", "no-buffer", "no-keepalive", "tcp-nodelay", "path-as-is",
        "location-trusted",
    ]

    /// curl 7.88 options `trawl get` does not take (yet), with the nearest thing it offers.
    static let notSupported: [String: String] = [
        "anyauth": "-u USER:PASSWORD sends basic authentication", "basic": "-u USER:PASSWORD (basic is the default)",
        "digest": "-H 'Authorization: …' with a precomputed value", "ntlm": "-u USER:PASSWORD (basic)",
        "negotiate": "-u USER:PASSWORD (basic)", "oauth2-bearer": "-H 'Authorization: Bearer TOKEN'",
        "upload-file": "--data-file FILE -X PUT", "T": "--data-file FILE -X PUT",
        "range": "-H 'Range: bytes=A-B'", "r": "-H 'Range: bytes=A-B'",
        "continue-at": "-o FILE -C (resumes from the partial file)",
        "dump-header": "-i (the head before the body on stdout) or -w '%{header_json}'",
        "D": "-i (the head before the body on stdout) or -w '%{header_json}'",
        "trace": "-v", "trace-ascii": "-v", "trace-time": "-v", "stderr": "-w '%{stderr}'",
        "resolve": "a hosts entry, or the IP address in the URL with -H 'Host: NAME'",
        "connect-to": "the IP address in the URL with -H 'Host: NAME'",
        "interface": "no equivalent", "local-port": "no equivalent", "ipv4": "an IPv4 address in the URL",
        "4": "an IPv4 address in the URL", "ipv6": "an IPv6 address in the URL", "6": "an IPv6 address in the URL",
        "http1.0": "--http1.1", "0": "--http1.1", "http3": "--http2", "tlsv1.2": "the default (TLS 1.2 or newer)",
        "tlsv1.3": "the default (TLS 1.2 or newer)", "ciphers": "no equivalent", "pinnedpubkey": "--cacert FILE",
        "proxy-insecure": "-k", "proxy-cacert": "--cacert FILE", "socks5": "-x socks5://HOST:PORT",
        "socks5-hostname": "-x socks5h://HOST:PORT", "preproxy": "-x", "proxytunnel": "-x (https is tunnelled)",
        "p": "-x (https is tunnelled)", "max-filesize": "--max-time, or -o with --sha256", "speed-limit": "--max-time",
        "speed-time": "--max-time", "Y": "--max-time", "y": "--max-time", "expect100-timeout": "no equivalent",
        "keepalive-time": "no equivalent", "netrc": "-u USER:PASSWORD", "n": "-u USER:PASSWORD",
        "netrc-file": "-u USER:PASSWORD", "netrc-optional": "-u USER:PASSWORD", "tr-encoding": "--compressed",
        "raw": "-H 'Accept-Encoding: identity'", "junk-session-cookies": "-b FILE", "j": "-b FILE",
        "form-string": "-F name=value", "post301": "-X POST (kept on 301/302 as given)", "post302": "-X POST",
        "post303": "-X POST", "request-target": "the path in the URL", "unix-socket": "a TCP address",
        "abstract-unix-socket": "a TCP address", "create-file-mode": "umask", "xattr": "no equivalent",
        "remote-name-all": "-O for each URL", "remote-time": "no equivalent", "R": "no equivalent",
        "time-cond": "-H 'If-Modified-Since: DATE'", "z": "-H 'If-Modified-Since: DATE'",
        "ignore-content-length": "no equivalent", "list-only": "no equivalent", "l": "no equivalent",
        "append": "no equivalent", "a": "no equivalent", "mail-from": "no equivalent", "mail-rcpt": "no equivalent",
        "ssl": "https URLs", "ssl-reqd": "https URLs", "sslv2": "the default TLS", "sslv3": "the default TLS",
        "styled-output": "no equivalent", "manual": "trawl get --help", "M": "trawl get --help",
        "version": "trawl --version", "V": "trawl --version", "rate": "trawl fetch --rate, or trawl bench",
        "parallel-immediate": "-Z", "fail-early": "-Z (each URL reports its own exit)",
        "hsts": "https URLs", "alt-svc": "no equivalent", "doh-url": "no equivalent", "dns-servers": "no equivalent",
        "aws-sigv4": "-H 'Authorization: …'", "delegation": "no equivalent", "ftp-pasv": "http or https URLs",
        "quote": "http or https URLs", "Q": "http or https URLs", "B": "http or https URLs",
        "use-ascii": "http or https URLs", "telnet-option": "http or https URLs", "t": "http or https URLs",
        "cert-type": "--cert FILE (PEM)", "key-type": "--key FILE (PEM)", "E": "--cert FILE", "pass": "--key FILE",
        "crlfile": "--cacert FILE", "cert-status": "no equivalent", "engine": "no equivalent",
        "false-start": "no equivalent", "sasl-ir": "no equivalent", "service-name": "no equivalent",
        "proxy-header": "-H", "proxy-basic": "--proxy-user USER:PASSWORD", "proxy-anyauth": "--proxy-user",
        "proxy-digest": "--proxy-user", "proxy-ntlm": "--proxy-user", "haproxy-protocol": "no equivalent",
        "suppress-connect-headers": "no equivalent", "happy-eyeballs-timeout-ms": "--connect-timeout",
        "max-filesize-large": "--max-time", "variable": "shell variables", "json-seq": "--json",
        "output-dir-create": "--output-dir DIR --create-dirs", "styled": "no equivalent",
    ]

    /// `arguments` (after `get`) as ArgumentParser should read them; `environment` gives `CURL_HOME` and `HOME`
    /// for `~/.curlrc` (read only without `-K` and when `-q` is not the first argument, as curl does).
    static func normalize(_ arguments: [String], environment: [String: String]) throws -> [String] {
        var options = try expand(arguments, from: nil)
        let hasConfig = options.contains { $0 == "--config" }
        if arguments.first != "-q", arguments.first != "--disable", !hasConfig,
            let path = defaultConfig(environment: environment)
        {
            // ~/.curlrc is written for curl: an option trawl get does not take is skipped with a warning, so that
            // a curl setting (--netrc, -4) does not stop every trawl get. A -K file the user names is strict.
            options = try expand(try CurlConfig.read(path, flag: "~/.curlrc"), from: path, lenient: true) + options
        }
        // -O takes the place of an -o: the n-th -o or -O is the n-th URL's.
        return try readConfigs(options).map { $0 == "--remote-name" ? "--output=" + Get.remoteNameMarker : $0 }
    }

    /// The whole command line of `trawl`, with the arguments of `get` normalized (others unchanged).
    static func commandLine(_ arguments: [String], environment: [String: String]) throws -> [String] {
        guard arguments.first == "get", !arguments.contains("--help"), !arguments.contains("-h") else {
            return arguments
        }
        return ["get"] + (try normalize(Array(arguments.dropFirst()), environment: environment))
    }

    /// `--config FILE` pairs replaced by the options the file holds (a config may name another, up to 8 deep).
    private static func readConfigs(_ options: [String], depth: Int = 0) throws -> [String] {
        guard options.contains("--config") else { return options }
        guard depth < 8 else { throw Unknown(description: "-K: configs name each other more than 8 deep") }
        var result: [String] = []
        var index = 0
        while index < options.count {
            if options[index] == "--", index > 0 {
                result += options[index...]
                break
            }
            if options[index] == "--config", index + 1 < options.count {
                let path = options[index + 1]
                result += try readConfigs(
                    try expand(try CurlConfig.read(path, flag: "-K"), from: path), depth: depth + 1)
                index += 2
                continue
            }
            result.append(options[index])
            index += 1
        }
        return result
    }

    /// `$CURL_HOME/.curlrc`, else `$HOME/.curlrc`, when it exists.
    static func defaultConfig(environment: [String: String]) -> String? {
        for base in [environment["CURL_HOME"], environment["HOME"]].compactMap({ $0 }) where !base.isEmpty {
            let path = (base.hasSuffix("/") ? base : base + "/") + ".curlrc"
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// Every option spelled long (`--silent`), each value as its own argument, URLs with a scheme; `source` is
    /// the config file the arguments came from (for messages), `nil` for the command line.
    static func expand(_ arguments: [String], from source: String?, lenient: Bool = false) throws -> [String] {
        var result: [String] = []
        var index = 0
        let place = source.map { " in \($0)" } ?? ""
        func value(for name: String, shown: String) throws -> String {
            guard index + 1 < arguments.count else {
                throw Unknown(description: "\(shown) needs a value\(place)")
            }
            index += 1
            return arguments[index]
        }
        func add(_ name: String, shown: String, inline: String?) throws {
            if name == "url" {
                result.append(withScheme(try inline ?? value(for: name, shown: shown)))
                return
            }
            guard let takesValue = long[name] else {
                let failure = unknown(shown, place: place)
                guard lenient else { throw failure }
                FileHandle.standardError.write(Data("warning: \(failure.description); skipped\n".utf8))
                return
            }
            if ignored.contains(name) { return }
            if name == "disable" { return }
            // A short option stays short when get declares it, so that messages name what was typed (-X).
            let spelled = shown.count == 2 && shown.hasPrefix("-") && keptShort.contains(shown.last ?? " ")
                ? shown : "--" + name
            if takesValue {
                result += [spelled, try inline ?? value(for: name, shown: shown)]
            } else {
                if inline != nil { throw Unknown(description: "\(shown) takes no value\(place)") }
                result.append(spelled)
                // curl's -C takes an offset, and `-C -` means "from where the file ends": trawl's -C.
                if name == "continue", index + 1 < arguments.count, arguments[index + 1] == "-" { index += 1 }
            }
        }
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += ["--"] + arguments[(index + 1)...].map(withScheme)
                break
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "="), long[String(body[..<equals])] == true {
                    let inline = String(body[body.index(after: equals)...])
                    try add(String(body[..<equals]), shown: argument, inline: inline)
                } else {
                    try add(String(body), shown: argument, inline: nil)
                }
            } else if argument.hasPrefix("-"), argument.count > 1 {
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let name = short[letter] else {
                        let failure = unknown("-\(letter)", place: place)
                        guard lenient else { throw failure }
                        FileHandle.standardError.write(Data("warning: \(failure.description); skipped\n".utf8))
                        break
                    }
                    if long[name] == true || name == "url" {
                        try add(name, shown: "-\(letter)", inline: letters.isEmpty ? nil : String(letters))
                        break
                    }
                    try add(name, shown: "-\(letter)", inline: nil)
                }
            } else {
                result.append(withScheme(argument))
            }
            index += 1
        }
        return result
    }

    /// A URL without `://` is http, as curl takes it (`example.com/x` → `http://example.com/x`).
    static func withScheme(_ url: String) -> String {
        url.contains("://") || url.isEmpty ? url : "http://" + url
    }

    /// "unknown option" with what to use instead: a curl option not supported yet names its nearest
    /// alternative; a misspelling names the option it is closest to.
    static func unknown(_ shown: String, place: String) -> Unknown {
        let name = String(shown.drop(while: { $0 == "-" }))
        let printed = TerminalText.safe(shown)
        if let nearest = notSupported[name] {
            return Unknown(
                description: "unknown option '\(printed)'\(place): trawl get does not support curl's \(printed) yet;"
                    + " nearest: \(nearest)")
        }
        let candidates = Array(long.keys.filter { !ignored.contains($0) })
        if let best = candidates.min(by: { distance($0, name) < distance($1, name) }),
            distance(best, name) <= max(2, name.count / 3)
        {
            return Unknown(description: "unknown option '\(printed)'\(place). Did you mean '--\(best)'?")
        }
        return Unknown(description: "unknown option '\(printed)'\(place): see 'trawl get --help'")
    }

    /// Levenshtein distance, for suggestions.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8.prefix(64)), b = Array(b.utf8.prefix(64))
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
