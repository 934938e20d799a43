/// The path of a route. Literal text is kept (spaces and other characters illegal in a path are
/// encoded); interpolated values are percent-encoded as whole segments, so a `/` inside a value
/// cannot change the path:
///
/// ```swift
/// let name = "a/b c"
/// let path: RoutePath = "repos/\(name)/issues"       // repos/a%2Fb%20c/issues
/// let same = RoutePath(segments: ["repos", name, "issues"])
/// ```
public struct RoutePath: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The encoded path, as it goes into the URL.
    public let encoded: String

    public init(stringLiteral value: String) {
        encoded = PercentEncoding.pathLiteral(value)
    }

    public init(stringInterpolation: Interpolation) {
        encoded = stringInterpolation.encoded
    }

    /// Joins segments with `/`, percent-encoding each one (including any `/` inside it).
    public init(segments: [String]) {
        encoded = segments.map(PercentEncoding.segment).joined(separator: "/")
    }

    /// A path already percent-encoded, used as is.
    public init(encoded: String) {
        self.encoded = encoded
    }

    public var description: String { encoded }

    /// Builds a path from literal text and encoded values.
    public struct Interpolation: StringInterpolationProtocol {
        var encoded = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            encoded.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        public mutating func appendLiteral(_ literal: String) {
            encoded += PercentEncoding.pathLiteral(literal)
        }

        /// Appends a value as one percent-encoded segment.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            encoded += PercentEncoding.segment(value.description)
        }
    }
}
