/// The fields one kind of object may have, decoded by name (`DocumentDecoder.object`). The
/// order of the cases is the order missing fields are reported in.
protocol ObjectField: CaseIterable, RawRepresentable<Int> {
    /// Each case's name in the file, at its raw value: the cases count from 0 in order.
    static var names: [StaticString] { get }
}

extension ObjectField {
    var name: StaticString { Self.names[rawValue] }

    /// The field whose name `key` spells, if any.
    @inline(__always)
    static func named(_ key: JSONString, in scanner: JSONScanner) -> Self? {
        guard let index = names.firstIndex(where: { scanner.equals(key, $0) }) else { return nil }
        return Self(rawValue: index)
    }
}

/// A set of one kind's fields, held as one bit per raw value so that the reader, which
/// tracks the fields of every object it reads, neither allocates nor hashes.
struct FieldSet<Field: ObjectField>: ExpressibleByArrayLiteral {
    private var bits: UInt64

    private init(bits: UInt64) {
        self.bits = bits
    }

    /// No fields. Unlike `[]`, it makes no array: the reader starts one for each object.
    init() {
        bits = 0
    }

    init(arrayLiteral fields: Field...) {
        bits = 0
        for field in fields { insert(field) }
    }

    /// Every field of the kind.
    static var all: Self {
        precondition(Field.names.count < 64, "a field set holds fewer than 64 fields")
        return Self(bits: (1 << UInt64(Field.names.count)) - 1)
    }

    var isEmpty: Bool { bits == 0 }

    func contains(_ field: Field) -> Bool { bits & Self.bit(field) != 0 }

    /// Adds `field`; false when it was already there.
    @discardableResult
    mutating func insert(_ field: Field) -> Bool {
        let bit = Self.bit(field)
        defer { bits |= bit }
        return bits & bit == 0
    }

    func subtracting(_ other: Self) -> Self { Self(bits: bits & ~other.bits) }

    func isDisjoint(with other: Self) -> Bool { bits & other.bits == 0 }

    private static func bit(_ field: Field) -> UInt64 { 1 << UInt64(field.rawValue) }
}
