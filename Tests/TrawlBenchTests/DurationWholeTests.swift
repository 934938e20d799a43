import Testing
@testable import TrawlBench

@Suite("bench: whole microseconds and nanoseconds of a duration")
struct DurationWholeTests {
    @Test("the same as seconds and attoseconds combined, rounded toward zero, for short, long and negative spans")
    func sameAsComponents() {
        let spans: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(999), .microseconds(1), .nanoseconds(1_999), .milliseconds(1_500),
            .seconds(9), .seconds(10), .seconds(86_400 * 365), .nanoseconds(-1), .nanoseconds(-1_500),
            .seconds(-12) - .nanoseconds(7), Duration(secondsComponent: 3, attosecondsComponent: 999_999_999_999),
        ]
        for span in spans {
            let (seconds, attoseconds) = span.components
            #expect(span.wholeMicroseconds == seconds * 1_000_000 + attoseconds / 1_000_000_000_000, "\(span)")
            #expect(span.wholeNanoseconds == seconds * 1_000_000_000 + attoseconds / 1_000_000_000, "\(span)")
        }
        #expect(Duration.milliseconds(1_500).wholeMicroseconds == 1_500_000)
        #expect(Duration.nanoseconds(-1_500).wholeMicroseconds == -1)
    }
}
