/// The age v1 header (C2SP age, "Header"): the version line, one or more stanzas, the MAC.
///
///     age-encryption.org/v1
///     -> X25519 XEl0dJ6y3C7KZkgmgWUicg63EyXJiwBJW8PdYJ/cYBE
///     qRS0AMjdjPvZ/WT08U2KL4G+PIooA3hy38SvLpvaC1E
///     --- HK2NmOBN9Dpq0Gw6xMCuhFcQlQLvZ/wQUi/2scLG75s
///
/// A stanza is `-> ` and space-separated arguments (printable ASCII, none empty), then its
/// body in unpadded canonical base64, 64 columns a line, ended by the first line shorter
/// than 64 (empty when the body fills its last line). The MAC covers every byte up to and
/// including `---`. Parsing is strict: LF only, no spare spaces, no padding; the first
/// deviation is refused with the line it is on.
struct Header {
    struct Stanza: Equatable {
        var arguments: [String]
        var body: [UInt8]
    }

    static let versionLine = Array("age-encryption.org/v1".utf8)
    static let columns = 64

    var stanzas: [Stanza]
    var mac: [UInt8]
    /// The header's bytes through `---`, which `mac` authenticates.
    var authenticated: ArraySlice<UInt8>
    /// Where the payload starts in the file.
    var payloadStart: Int

    /// Whether `bytes` begin like an age file of any version (the binary format).
    static func looksLikeAge(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: "age-encryption.org/".utf8)
    }

    static func parse(_ bytes: [UInt8]) throws(EnvelopeError) -> Header {
        var reader = LineReader(bytes: bytes)
        let version = try reader.next()
        guard Array(version) == versionLine else {
            if looksLikeAge(Array(version)) {
                throw EnvelopeError(
                    .header,
                    "unsupported age version '\(String(decoding: version.dropFirst(19), as: UTF8.self))' (this reads v1)"
                )
            }
            throw EnvelopeError(
                .header, "not an age file: it does not start with 'age-encryption.org/v1'")
        }
        var stanzas: [Stanza] = []
        while true {
            let start = reader.offset
            let line = try reader.next()
            if line.starts(with: "---".utf8) {
                guard !stanzas.isEmpty else {
                    throw EnvelopeError(
                        .header, "age header line \(reader.number): the header has no stanza")
                }
                guard line.count == 4 + 43, line[line.startIndex + 3] == UInt8(ascii: " "),
                    let mac = Base64.decode(line.dropFirst(4)), mac.count == 32
                else {
                    throw EnvelopeError(
                        .header,
                        "age header line \(reader.number): the MAC line is not '--- ' and 43 characters of canonical base64"
                    )
                }
                return Header(
                    stanzas: stanzas, mac: mac, authenticated: bytes[..<(start + 3)],
                    payloadStart: reader.offset)
            }
            stanzas.append(try stanza(line, &reader))
        }
    }

    private static func stanza(_ line: ArraySlice<UInt8>, _ reader: inout LineReader)
        throws(EnvelopeError) -> Stanza
    {
        let at = "age header line \(reader.number)"
        guard line.starts(with: "-> ".utf8) else {
            throw EnvelopeError(.header, "\(at): expected a stanza ('-> ') or the MAC ('--- ')")
        }
        let arguments = line.dropFirst(3).split(
            separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (0x21...0x7e).contains($0) } })
        else {
            throw EnvelopeError(
                .header,
                "\(at): a stanza's arguments must be printable ASCII, one space apart, none empty")
        }
        var body: [UInt8] = []
        while true {
            let bodyLine = try reader.next()
            guard bodyLine.count <= columns, let chunk = Base64.decode(bodyLine) else {
                throw EnvelopeError(
                    .header,
                    "age header line \(reader.number): a stanza body line must be at most 64 characters of canonical unpadded base64"
                )
            }
            body += chunk
            if bodyLine.count < columns { break }
        }
        return Stanza(arguments: arguments.map { String(decoding: $0, as: UTF8.self) }, body: body)
    }

    /// The header's text through `---` (what the MAC covers), for `stanzas`.
    static func encode(_ stanzas: [Stanza]) -> [UInt8] {
        var text = versionLine + [0x0a]
        for stanza in stanzas {
            text += Array(("-> " + stanza.arguments.joined(separator: " ")).utf8) + [0x0a]
            let body = Base64.encode(stanza.body)
            var start = 0
            // Always a final line shorter than 64 columns, empty when the body fills its last.
            repeat {
                let end = min(start + columns, body.count)
                text += body[start..<end] + [0x0a]
                start += columns
            } while start <= body.count
        }
        return text + Array("---".utf8)
    }

    /// Lines ended by LF; a header that ends before its MAC line is refused.
    private struct LineReader {
        let bytes: [UInt8]
        var offset = 0
        var number = 0

        mutating func next() throws(EnvelopeError) -> ArraySlice<UInt8> {
            guard let end = bytes[offset...].firstIndex(of: 0x0a) else {
                throw EnvelopeError(
                    .header,
                    bytes.isEmpty
                        ? "the file is empty, not an age file"
                        : "the age header ends at line \(number + 1) before its MAC line ('--- ')")
            }
            defer { offset = end + 1 }
            number += 1
            return bytes[offset..<end]
        }
    }
}
