internal import CCurl
internal import CZlib

/// The C libraries Trawl runs on, as loaded at run time: a shared library newer than the headers Trawl was built
/// against shows its own version here. For `trawl --version` and bug reports.
///
/// ```swift
/// let curl = LinkedLibraries.curl
/// print("libcurl \(curl.version) \(curl.ssl ?? "no TLS")")   // libcurl 7.88.1 OpenSSL/3.0.19
/// print(curl.features.contains("HTTP2"))                      // true
/// print("zlib \(LinkedLibraries.zlib)")                       // zlib 1.2.13
/// ```
///
/// `LinkedLibraries.yajl` (in `TrawlJSON`) gives the JSON parser's.
public enum LinkedLibraries {
    /// What libcurl's `curl_version_info` reports.
    ///
    /// ```swift
    /// LinkedLibraries.curl.libraries   // ["zlib/1.2.13", "brotli/1.0.9", "zstd/1.5.4", "nghttp2/1.52.0", …]
    /// ```
    public struct Curl: Sendable, Hashable {
        /// libcurl's version, e.g. `7.88.1`.
        public var version: String
        /// The TLS backend and its version, e.g. `OpenSSL/3.0.19`; nil when libcurl was built without TLS.
        public var ssl: String?
        /// The other libraries libcurl uses, named as `curl --version` names them, e.g. `zlib/1.2.13`,
        /// `brotli/1.0.9`, `zstd/1.5.4`, `libidn2/2.3.3`, `libssh2/1.10.0`, `nghttp2/1.52.0`.
        public var libraries: [String]
        /// The URL schemes it speaks, e.g. `["dict", "file", "ftp", …, "http", "https", …]`.
        public var protocols: [String]
        /// Its features as `curl --version` lists them, e.g. `["alt-svc", "AsynchDNS", "brotli", "HTTP2", …]`.
        public var features: [String]
    }

    /// libcurl's version, TLS backend, libraries, protocols and features.
    public static let curl: Curl = {
        _ = curlGlobalInit  // version info may start OpenSSL: the exit rule must be set first
        guard let info = trawl_curl_version_info()?.pointee else {
            return Curl(version: "unknown", ssl: nil, libraries: [], protocols: [], features: [])
        }
        // The struct grew over the years: a field exists only when the library's `age` says so.
        func since(_ age: CURLversion) -> Bool { info.age.rawValue >= age.rawValue }
        var libraries: [String] = []
        func add(_ name: String, _ text: UnsafePointer<CChar>?) {
            guard let text else { return }
            libraries.append(name + String(cString: text))
        }
        add("zlib/", info.libz_version)
        if since(CURLVERSION_FIFTH) { add("brotli/", info.brotli_version) }
        if since(CURLVERSION_EIGHTH) { add("zstd/", info.zstd_version) }
        if since(CURLVERSION_THIRD) { add("libidn2/", info.libidn) }
        if since(CURLVERSION_FOURTH) { add("", info.libssh_version) }
        if since(CURLVERSION_SIXTH) {
            add("nghttp2/", info.nghttp2_version)
            add("", info.quic_version)
        }
        let features =
            since(CURLVERSION_ELEVENTH)
            ? strings(info.feature_names)
            : bitNames.filter { info.features & $0.bit != 0 }.map(\.name)
        return Curl(
            version: info.version.map { String(cString: $0) } ?? "unknown",
            ssl: info.ssl_version.map { String(cString: $0) },
            libraries: libraries,
            protocols: strings(info.protocols),
            features: features)
    }()

    /// The version of zlib, e.g. `1.2.13` (Trawl decodes gzip and deflate bodies with it).
    public static var zlib: String {
        String(cString: zlibVersion())
    }

    /// The strings of a C array ended by a null entry.
    private static func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard var entry = list else { return [] }
        var result: [String] = []
        while let text = entry.pointee {
            result.append(String(cString: text))
            entry += 1
        }
        return result
    }

    /// Feature names by bit, for a libcurl older than 7.87 (no `feature_names` yet); the names curl gives them.
    private static let bitNames: [(bit: Int32, name: String)] = [
        (CURL_VERSION_ALTSVC, "alt-svc"), (CURL_VERSION_ASYNCHDNS, "AsynchDNS"), (CURL_VERSION_BROTLI, "brotli"),
        (CURL_VERSION_HSTS, "HSTS"), (CURL_VERSION_HTTP2, "HTTP2"), (CURL_VERSION_HTTP3, "HTTP3"),
        (CURL_VERSION_IDN, "IDN"), (CURL_VERSION_IPV6, "IPv6"), (CURL_VERSION_LARGEFILE, "Largefile"),
        (CURL_VERSION_LIBZ, "libz"), (CURL_VERSION_PSL, "PSL"), (CURL_VERSION_SSL, "SSL"),
        (CURL_VERSION_UNIX_SOCKETS, "UnixSockets"), (CURL_VERSION_ZSTD, "zstd"),
    ]
}
