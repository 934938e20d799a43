import ArgumentParser
import TrawlEngine
import TrawlJSON

/// `trawl version` and `trawl --version` (`-V`): Trawl's version and those of the C libraries it runs on, as
/// `curl --version` prints its own.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print trawl's version and those of the libcurl, yajl and zlib it runs with (also: --version).")

    /// `trawl --version` and `trawl -V` alone run this command (ArgumentParser's own `--version` prints only a
    /// string fixed at compile time, and the libraries' versions are known at run time).
    static func arguments(_ given: [String]) -> [String] {
        given == ["--version"] || given == ["-V"] ? ["version"] : given
    }

    /// ```
    /// trawl dev
    /// libcurl 7.88.1 OpenSSL/3.0.19 zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 libidn2/2.3.3 libssh2/1.10.0 nghttp2/1.52.0
    /// yajl 2.1.0
    /// zlib 1.2.13
    /// Protocols: dict file ftp ftps gopher gophers http https …
    /// Features: alt-svc AsynchDNS brotli GSS-API HSTS HTTP2 …
    /// ```
    static var text: String {
        let curl = LinkedLibraries.curl
        let libcurl = ["libcurl", curl.version] + (curl.ssl.map { [$0] } ?? []) + curl.libraries
        return [
            "trawl \(TrawlVersion.current)",
            libcurl.joined(separator: " "),
            "yajl \(LinkedLibraries.yajl)",
            "zlib \(LinkedLibraries.zlib)",
            "Protocols: " + curl.protocols.joined(separator: " "),
            "Features: " + curl.features.joined(separator: " "),
        ].joined(separator: "\n")
    }

    func run() {
        print(Self.text)
    }
}
