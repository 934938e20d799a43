/// Conversions from the raw text of a JSON number, done on demand by the decoder.
enum NumberParsing {
    /// The decimal digits of a number without leading or trailing zeros, and the power of ten to
    /// scale them by: `-12.50e1` → (negative, "125", 0).
    struct Decimal {
        var negative = false
        var digits: Range<Int> = 0..<0
        var exponent = 0
        /// Digits with trailing zeros removed; `digitsEnd` is where they stop.
        var digitsEnd = 0
    }

    /// Splits number text into sign, significant digits and exponent; nil if it is not a number.
    static func decimal(_ text: UnsafeRawBufferPointer) -> (Decimal, [UInt8])? {
        var result = Decimal()
        var digits: [UInt8] = []
        var fraction = 0
        var i = 0
        let n = text.count
        if i < n && text[i] == UInt8(ascii: "-") {
            result.negative = true
            i += 1
        }
        var sawDigit = false
        while i < n, text[i] >= 0x30 && text[i] <= 0x39 {
            if !(digits.isEmpty && text[i] == 0x30) { digits.append(text[i]) }
            sawDigit = true
            i += 1
        }
        if i < n && text[i] == UInt8(ascii: ".") {
            i += 1
            while i < n, text[i] >= 0x30 && text[i] <= 0x39 {
                if !(digits.isEmpty && text[i] == 0x30) { digits.append(text[i]) }
                fraction += 1
                sawDigit = true
                i += 1
            }
        }
        guard sawDigit else { return nil }
        var exponent = 0
        if i < n && (text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E")) {
            i += 1
            var negativeExponent = false
            if i < n && (text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-")) {
                negativeExponent = text[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < n, text[i] >= 0x30 && text[i] <= 0x39 {
                exponent = Swift.min(exponent * 10 + Int(text[i] - 0x30), 100_000_000)
                i += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        guard i == n else { return nil }
        // Leading zeros of the fraction were dropped from `digits` but still scale it.
        var scale = exponent - fraction
        while let last = digits.last, last == 0x30 {
            digits.removeLast()
            scale += 1
        }
        result.exponent = scale
        return (result, digits)
    }

    /// The value as a `UInt64` magnitude with its sign, when it is an integer of at most 64 bits.
    static func integer(_ text: UnsafeRawBufferPointer) -> (negative: Bool, magnitude: UInt64)? {
        // Fast path: plain digits.
        var i = 0
        let n = text.count
        var negative = false
        if n > 0 && text[0] == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        if n > i && n - i <= 19 {
            var value: UInt64 = 0
            var plain = true
            while i < n {
                let digit = text[i] &- 0x30
                if digit > 9 {
                    plain = false
                    break
                }
                value = value &* 10 &+ UInt64(digit)
                i += 1
            }
            if plain { return (negative, value) }
        }
        guard let (decimal, digits) = decimal(text) else { return nil }
        guard decimal.exponent >= 0, digits.count + decimal.exponent <= 20 else {
            return digits.isEmpty ? (decimal.negative, 0) : nil
        }
        var value: UInt64 = 0
        for digit in digits + Array(repeating: 0x30, count: decimal.exponent) {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - 0x30))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return (decimal.negative, value)
    }

    static func int64(_ text: UnsafeRawBufferPointer) -> Int64? {
        guard let (negative, magnitude) = integer(text) else { return nil }
        if negative {
            if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    static func uint64(_ text: UnsafeRawBufferPointer) -> UInt64? {
        guard let (negative, magnitude) = integer(text) else { return nil }
        if negative { return magnitude == 0 ? 0 : nil }
        return magnitude
    }

    private static let exactPowers: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The nearest `Double`, or nil when the number overflows to infinity or underflows to zero.
    static func double(_ text: UnsafeRawBufferPointer) -> Double? {
        if let value = fastDouble(text) { return value }
        let string = String(decoding: text, as: UTF8.self)
        guard let value = Double(string), value.isFinite else { return nil }
        if value == 0, let (_, digits) = decimal(text), !digits.isEmpty { return nil }
        return value
    }

    /// The nearest `Float`, or nil when the number overflows or underflows.
    static func float(_ text: UnsafeRawBufferPointer) -> Float? {
        let string = String(decoding: text, as: UTF8.self)
        guard let value = Float(string), value.isFinite else { return nil }
        if value == 0, let (_, digits) = decimal(text), !digits.isEmpty { return nil }
        return value
    }

    /// Clinger's fast path: up to 15 significant digits and a small power of ten are exact doubles,
    /// so one multiplication or division rounds correctly.
    @inline(__always)
    private static func fastDouble(_ text: UnsafeRawBufferPointer) -> Double? {
        var i = 0
        let n = text.count
        var negative = false
        if n > 0 && text[0] == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        var mantissa: UInt64 = 0
        var digitCount = 0
        var fraction = 0
        var sawDot = false
        while i < n {
            let byte = text[i]
            if byte >= 0x30 && byte <= 0x39 {
                mantissa = mantissa &* 10 &+ UInt64(byte - 0x30)
                if mantissa != 0 { digitCount += 1 }
                if sawDot { fraction += 1 }
            } else if byte == UInt8(ascii: ".") && !sawDot {
                sawDot = true
            } else {
                return nil
            }
            i += 1
        }
        guard digitCount <= 15, fraction <= 22 else { return nil }
        let value = Double(mantissa) / exactPowers[fraction]
        return negative ? -value : value
    }
}
