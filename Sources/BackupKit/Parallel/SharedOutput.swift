/// The part of a buffer that the second half of a two-core job writes (the reader's second
/// half of a file's logs, the merge's second half of the merged ones): no other thread touches
/// it until `concurrently` has joined that half, which is what makes handing the pointer
/// across threads sound.
struct SharedOutput<Element>: @unchecked Sendable {
    let start: UnsafeMutablePointer<Element>
}
