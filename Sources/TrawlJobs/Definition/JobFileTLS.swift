import Foundation
import TrawlEngine
import Yams

/// The job file's `tls:` mapping (in `settings` and per source) and `settings.http`.
extension JobFileReader {
    /// `tls: {ca_file, ca_path, cert, key, insecure}`; files must exist (paths are relative to the working
    /// directory, as curl's are).
    func tls(_ node: Node, _ field: String) throws(JobFileError) -> TLSSettings {
        var tls = TLSSettings()
        for (key, entry) in try mapping(node, field, allowed: TLSSettings.keys) {
            let value = entry.value
            let subfield = "\(field).\(key)"
            switch key {
            case "ca_file": tls.caFile = try path(value, subfield, directory: false)
            case "ca_path": tls.caPath = try path(value, subfield, directory: true)
            case "cert": tls.clientCertificate = try path(value, subfield, directory: false)
            case "key": tls.clientKey = try path(value, subfield, directory: false)
            default:
                guard value.tagName == .bool, let flag = value.bool else {
                    throw error(value, subfield, "expected true or false, found \(kind(value))")
                }
                tls.insecure = flag
            }
        }
        return tls
    }

    private func path(_ node: Node, _ field: String, directory: Bool) throws(JobFileError) -> String {
        let path = try string(node, field)
        var isDirectory: ObjCBool = false
        guard !path.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw error(
                node, field, "'\(path)': no such \(directory ? "directory" : "file")",
                hint: "paths are relative to the working directory")
        }
        guard isDirectory.boolValue == directory else {
            let what = directory ? "a file: name a directory" : "a directory: name a file"
            throw error(node, field, "'\(path)' is \(what)")
        }
        return path
    }

    /// `http: "1.1" | "2" | "2-prior-knowledge"`, as curl's `--http1.1`, `--http2`, `--http2-prior-knowledge`.
    func http(_ node: Node, _ field: String) throws(JobFileError) -> Client.HTTPVersionPreference {
        let text: String
        if case .scalar(let scalar) = node, node.tagName != .null { text = scalar.string } else { text = "" }
        switch text {
        case "1.1": return .http1_1
        case "2": return .http2
        case "2-prior-knowledge": return .http2PriorKnowledge
        default:
            throw error(
                node, field, "expected \"1.1\", \"2\" or \"2-prior-knowledge\", found \(kind(node))",
                hint: "write http: \"2\" (HTTP/2 offered over https, the default) or http: \"1.1\"")
        }
    }
}
