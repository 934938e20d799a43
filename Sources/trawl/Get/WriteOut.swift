import Foundation
import TrawlEngine

/// What `-w` can print about one transfer.
struct TransferFacts {
    var url: String
    var method: String
    var head: ResponseHead?
    var bytes: Int64 = 0
    var exitCode: Int32 = 0
    var errorMessage: String = ""
    var elapsed: Duration = .zero
    var file: String?
}

/// curl's `-w` format: `%{variable}`, `%header{name}`, `%%`, and `\n` `\r` `\t` `\\`; `%{stderr}` and `%{stdout}`
/// switch where the rest goes. Unknown variables print nothing (and a warning on stderr), as in curl.
struct WriteOut {
    let format: String

    /// Pieces of output, each for stdout (`false`) or stderr (`true`).
    func render(_ facts: TransferFacts, warn: (String) -> Void = { _ in }) -> [(toStderr: Bool, text: String)] {
        var pieces: [(Bool, String)] = []
        var current = ""
        var toStderr = false
        var rest = Substring(format)
        func flush() {
            if !current.isEmpty { pieces.append((toStderr, current)) }
            current = ""
        }
        while let character = rest.first {
            rest = rest.dropFirst()
            if character == "\\", let next = rest.first {
                switch next {
                case "n": current += "\n"
                case "r": current += "\r"
                case "t": current += "\t"
                case "\\": current += "\\"
                default: current += "\\" + String(next)
                }
                rest = rest.dropFirst()
            } else if character == "%", rest.first == "%" {
                current += "%"
                rest = rest.dropFirst()
            } else if character == "%", rest.hasPrefix("{"), let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(after: rest.startIndex)..<close])
                rest = rest[rest.index(after: close)...]
                switch name {
                case "stderr":
                    flush()
                    toStderr = true
                case "stdout":
                    flush()
                    toStderr = false
                default:
                    if let value = Self.variable(name, facts) {
                        current += value
                    } else {
                        warn("unknown --write-out variable: '\(name)'")
                    }
                }
            } else if character == "%", rest.hasPrefix("header{"), let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 7)..<close])
                rest = rest[rest.index(after: close)...]
                current += facts.head?.headers.values(for: name).joined(separator: ", ") ?? ""
            } else {
                current.append(character)
            }
        }
        flush()
        return pieces
    }

    static let names = [
        "content_type", "errormsg", "exitcode", "filename_effective", "http_code", "http_version", "method",
        "num_redirects", "remote_ip", "remote_port", "response_code", "size_download", "size_header",
        "speed_download", "time_appconnect", "time_connect", "time_namelookup", "time_pretransfer",
        "time_starttransfer", "time_total", "url", "url_effective",
    ]

    static func variable(_ name: String, _ facts: TransferFacts) -> String? {
        let head = facts.head
        let timings = head?.timings
        switch name {
        case "http_code", "response_code": return String(format: "%03ld", head?.status ?? 0)
        case "time_total": return seconds(facts.elapsed)
        case "time_namelookup": return seconds(timings?.dns ?? .zero)
        case "time_connect": return seconds(timings?.connect ?? .zero)
        case "time_appconnect": return seconds(timings?.tls ?? .zero)
        case "time_pretransfer": return seconds(max(timings?.tls ?? .zero, timings?.connect ?? .zero))
        case "time_starttransfer": return seconds(timings?.firstByte ?? .zero)
        case "size_download": return String(facts.bytes)
        case "size_header": return String(head?.headerSize ?? 0)
        case "speed_download":
            let time = Double(facts.elapsed.components.seconds) + Double(facts.elapsed.components.attoseconds) / 1e18
            return String(time > 0 ? Int64(Double(facts.bytes) / time) : 0)
        case "url_effective": return head?.url ?? facts.url
        case "url": return facts.url
        case "num_redirects": return String(head?.redirects.count ?? 0)
        case "content_type": return head?.headers["Content-Type"] ?? ""
        case "exitcode": return String(facts.exitCode)
        case "errormsg": return facts.errorMessage
        case "method": return facts.method
        case "remote_ip": return head?.remoteIP ?? ""
        case "remote_port": return head.map { String($0.remotePort) } ?? "0"
        case "filename_effective": return facts.file ?? ""
        case "http_version":
            switch head?.httpVersion {
            case .http1_0: return "1"
            case .http1_1: return "1.1"
            case .http2: return "2"
            case .http3: return "3"
            default: return "0"
            }
        case "header_json": return headerJSON(head?.headers ?? [:])
        case "json":
            let fields = names.map { name in
                let value = variable(name, facts) ?? ""
                let numeric = ["exitcode", "num_redirects", "remote_port", "response_code", "http_code",
                               "size_download", "size_header", "speed_download"].contains(name)
                    || name.hasPrefix("time_")
                return "\"\(name)\":" + (numeric ? value : jsonString(value))
            }
            return "{" + fields.joined(separator: ",") + "}"
        default: return nil
        }
    }

    /// `{"name":["value",…],…}`, names in lower case in the order first seen, as curl prints `%{header_json}`.
    static func headerJSON(_ headers: HTTPHeaders) -> String {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            if values[key] == nil { order.append(key) }
            values[key, default: []].append(value)
        }
        let lines = order.map { key in
            jsonString(key) + ":[" + (values[key] ?? []).map(jsonString).joined(separator: ",") + "]"
        }
        return "{" + lines.joined(separator: ",\n") + "\n}"
    }

    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Seconds with six decimals, as curl prints times.
    static func seconds(_ duration: Duration) -> String {
        let micro = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return String(format: "%lld.%06lld", micro / 1_000_000, micro % 1_000_000)
    }
}
