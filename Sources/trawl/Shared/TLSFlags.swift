import ArgumentParser
import Foundation
import TrawlEngine
import TrawlJobs

/// `--cacert`, `--capath`, `-k`, `--cert`, `--key`: TLS as curl spells it, for `get`, `fetch`, `extract` and
/// `bench`. Without `--cacert` or `--capath`, curl's variables apply: `CURL_CA_BUNDLE`, else `SSL_CERT_DIR`
/// and `SSL_CERT_FILE`.
struct TLSFlags: ParsableArguments {
    @Option(name: .customLong("cacert"), help: ArgumentHelp(
        "Trust the CA certificates in this PEM file instead of the system's.", valueName: "file"))
    var caFile: String?

    @Option(name: .customLong("capath"), help: ArgumentHelp(
        "Trust the CA certificates in this directory (hashed names, as openssl rehash makes them).",
        valueName: "dir"))
    var caPath: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Skip TLS certificate verification (dangerous).")
    var insecure = false

    @Option(name: .customLong("cert"), help: ArgumentHelp(
        "Client certificate (PEM) for servers that ask for one; may hold the key too.", valueName: "file"))
    var certificate: String?

    @Option(name: .customLong("key"), help: ArgumentHelp(
        "The client certificate's private key (PEM), when it is in a file of its own.", valueName: "file"))
    var key: String?

    /// The line `-k` prints on stderr (once per run).
    static let insecureWarning =
        "warning: -k/--insecure: TLS certificates are not checked; anyone on the network path can read and change "
        + "this traffic"

    func validate() throws {
        if key != nil, certificate == nil { throw ValidationError("--key needs --cert FILE (the client certificate)") }
        try Self.checkFile(caFile, flag: "--cacert")
        try Self.checkFile(certificate, flag: "--cert")
        try Self.checkFile(key, flag: "--key")
        if let caPath {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: caPath, isDirectory: &isDirectory) else {
                throw ValidationError("--capath '\(caPath)': no such directory")
            }
            guard isDirectory.boolValue else {
                throw ValidationError("--capath '\(caPath)' is a file: give a directory, or use --cacert for a file")
            }
        }
    }

    /// A file a flag names must be readable before anything is sent.
    static func checkFile(_ path: String?, flag: String) throws {
        guard let path else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("\(flag) '\(path)': no such file")
        }
        guard !isDirectory.boolValue else { throw ValidationError("\(flag) '\(path)' is a directory: name a file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ValidationError("\(flag) '\(path)': permission denied")
        }
    }

    /// The flags as a job file's `tls:` overlay (only what was given).
    var overlay: TLSSettings {
        TLSSettings(
            caFile: caFile, caPath: caPath, clientCertificate: certificate, clientKey: key,
            insecure: insecure ? true : nil)
    }

    /// The options for a client: these flags, then curl's environment variables for the CAs.
    func options(environment: [String: String]) -> Client.TLSOptions {
        overlay.withCurlEnvironment(environment).options
    }

    /// Prints the `-k` warning once, and quiets the engine's own log line for it (one line, not two).
    func apply(to configuration: inout Client.Configuration, environment: [String: String]) {
        configuration.tls = options(environment: environment)
        if insecure {
            FileHandle.standardError.write(Data((Self.insecureWarning + "\n").utf8))
            configuration.logger.logLevel = .error
        }
    }
}
