import Trawl

/// `LinkHeader` on any header text: never a target with a control character (CR and LF above all: a target
/// becomes the next request's URL), relations lowercased without blanks, parameter names lowercased and
/// non-empty, at most one `rel`, and `next`/`last` agreeing with the links.
///
/// Input: byte 0 picks the base URL; the rest is the header value.
enum LinkHeaderTarget {
    static let bases: [String?] = [
        nil, "https://api.example.com/repos?page=2", "http://127.0.0.1:8080/a/b/", "file:///etc/passwd",
    ]

    static func run(_ input: [UInt8]) {
        let base = bases[Int((input.first ?? 0) & 3)]
        let text = String(decoding: input.dropFirst(), as: UTF8.self)
        let header = LinkHeader(text, baseURL: base)
        for link in header.links {
            let controls = link.target.unicodeScalars.filter { $0.value < 0x20 || $0.value == 0x7F }
            require(controls.isEmpty, "link target \(link.target.debugDescription) has control characters")
            for relation in link.relations {
                require(!relation.isEmpty && relation == relation.lowercased(), "relation \(relation.debugDescription)")
                require(!relation.contains(" ") && !relation.contains("\t"), "relation \(relation.debugDescription)")
            }
            for parameter in link.parameters {
                require(
                    !parameter.name.isEmpty && parameter.name == parameter.name.lowercased(),
                    "parameter name \(parameter.name.debugDescription)")
            }
            require(link.parameters.filter { $0.name == "rel" }.count <= 1, "more than one rel in \(link)")
        }
        require(header.next == header.links.first { $0.relations.contains("next") }?.target, "next disagrees")
        require(header.last == header.links.first { $0.relations.contains("last") }?.target, "last disagrees")
        require(LinkHeader(text, baseURL: base) == header, "parsing the same text twice differs")
    }
}
