/// Limits that keep a hostile or broken document from exhausting memory or time.
///
/// ```swift
/// var limits = JSONLimits()
/// limits.maxElementBytes = 1 << 20   // refuse elements over 1 MiB
/// let extractor = try JSONExtractor(path: "items", limits: limits)
/// ```
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects accepted. Default 512.
    public var maxDepth: Int
    /// The largest single string or number, in bytes. Default 64 MiB.
    public var maxTokenBytes: Int
    /// The largest element, as recorded (about its compact JSON size). Default 64 MiB.
    public var maxElementBytes: Int
    /// The largest captured side field, as recorded. Default 1 MiB.
    public var maxCaptureBytes: Int

    /// The defaults: depth 512, tokens and elements up to 64 MiB, captured fields up to 1 MiB.
    public init(
        maxDepth: Int = 512, maxTokenBytes: Int = 64 << 20, maxElementBytes: Int = 64 << 20,
        maxCaptureBytes: Int = 1 << 20
    ) {
        self.maxDepth = maxDepth
        self.maxTokenBytes = maxTokenBytes
        self.maxElementBytes = maxElementBytes
        self.maxCaptureBytes = maxCaptureBytes
    }
}
