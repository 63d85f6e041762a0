import RawbleWire

/// Something wrong in incoming ACL data, reported by ``ACLReassembler`` as a value.
/// In every case the reassembler has already recovered (dropped the bad data).
public enum ACLReassemblyError: Error, Hashable, Sendable {
    /// A continuation fragment arrived with no frame being reassembled; dropped.
    case continuationWithoutStart(handle: UInt16, length: Int)
    /// A new first fragment arrived while a frame was incomplete: the partial frame
    /// (`received` of `expected` bytes, `nil` when its header was incomplete) was dropped and
    /// the new fragment started a frame.
    case partialFrameDropped(handle: UInt16, received: Int, expected: Int?)
    /// The fragments carried more bytes (`received`) than the L2CAP header announced
    /// (`expected`, header included); the whole frame was dropped.
    case excessData(handle: UInt16, expected: Int, received: Int)
    /// The L2CAP header announced a frame (`length` bytes, header included) above the
    /// reassembler's limit; it was not buffered, and its continuations are skipped.
    case frameTooLarge(handle: UInt16, length: Int, limit: Int)
    /// A packet with the reserved packet boundary flag `11`; dropped.
    case reservedPacketBoundary(handle: UInt16)
}

/// Reassembles L2CAP basic frames from incoming HCI ACL packets, per connection, sans I/O
/// (Core Vol 4 Part E 5.4.2, Vol 3 Part A 7.2).
///
/// A first fragment (boundary flag `00` or `10`) starts a frame; continuation fragments (`01`)
/// extend it until the byte count announced by the L2CAP header is reached. The 4-byte L2CAP
/// header itself may be split across fragments. A packet carrying a whole PDU is accepted
/// whatever its size, even above the controller's announced ACL length (Bumble does this).
///
/// Memory is bounded: a frame whose header announces more than ``maximumFrameLength`` bytes is
/// never buffered, and buffers grow only with bytes actually received. Problems are returned
/// as ``ACLReassemblyError`` values, never thrown or trapped on.
public struct ACLReassembler: Sendable {
    /// What one received packet produced: at most one frame, and any problems found
    /// (a frame and a problem together when a new start replaced a partial frame).
    public struct Output: Hashable, Sendable {
        /// A complete L2CAP frame, if this packet finished one.
        public var frame: L2CAPFrame?
        /// Problems found, in order.
        public var errors: [ACLReassemblyError]

        public init(frame: L2CAPFrame? = nil, errors: [ACLReassemblyError] = []) {
            self.frame = frame
            self.errors = errors
        }
    }

    /// The largest L2CAP frame (header included) accepted: 65,535 + 4 by default.
    public var maximumFrameLength: Int

    private enum Partial: Sendable {
        /// Bytes received so far (the header may still be incomplete).
        case collecting([UInt8])
        /// An oversized frame being skipped: continuation bytes still to ignore.
        case skipping(remaining: Int)
    }

    private var partials: [UInt16: Partial] = [:]

    /// - Parameter maximumFrameLength: largest frame accepted, L2CAP header included
    ///   (for example the ATT MTU + 4). Values below 4 are raised to 4.
    public init(maximumFrameLength: Int = Int(UInt16.max) + L2CAPHeader.size) {
        self.maximumFrameLength = max(L2CAPHeader.size, maximumFrameLength)
    }

    /// Whether a frame is partly received on `handle`.
    public func hasPartialFrame(on handle: UInt16) -> Bool { partials[handle] != nil }

    /// Takes one ACL packet from the controller.
    public mutating func receive(_ packet: ACLPacket) -> Output {
        let handle = packet.handle
        var errors: [ACLReassemblyError] = []
        switch packet.packetBoundary {
        case .reserved:
            return Output(errors: [.reservedPacketBoundary(handle: handle)])
        case .firstFlushable, .firstNonFlushable:
            if case .collecting(let bytes)? = partials.removeValue(forKey: handle) {
                errors.append(.partialFrameDropped(handle: handle, received: bytes.count,
                                                   expected: L2CAPHeader(peeking: bytes)?.frameLength))
            }
            // Fast path: a whole frame in one packet, kept as a slice of the input.
            if let header = L2CAPHeader(peeking: packet.payload), packet.payload.count >= header.frameLength {
                return Output(frame: complete(packet.payload, header: header, handle: handle, errors: &errors),
                              errors: errors)
            }
            return Output(frame: append(packet.payload, to: [], handle: handle, errors: &errors), errors: errors)
        case .continuation:
            switch partials.removeValue(forKey: handle) {
            case nil:
                return Output(errors: [.continuationWithoutStart(handle: handle, length: packet.payload.count)])
            case .skipping(let remaining)?:
                if packet.payload.count < remaining {
                    partials[handle] = .skipping(remaining: remaining - packet.payload.count)
                }
                return Output()
            case .collecting(let bytes)?:
                return Output(frame: append(packet.payload, to: bytes, handle: handle, errors: &errors),
                              errors: errors)
            }
        }
    }

    /// Drops any partial frame of a closed connection.
    public mutating func connectionClosed(_ handle: UInt16) {
        partials.removeValue(forKey: handle)
    }

    /// Adds a fragment to the bytes collected so far; stores the partial state or returns the
    /// finished frame.
    private mutating func append(_ fragment: ArraySlice<UInt8>, to collected: [UInt8], handle: UInt16,
                                 errors: inout [ACLReassemblyError]) -> L2CAPFrame? {
        var bytes = collected
        // Complete the header first, so the announced length is checked before buffering more.
        if bytes.count < L2CAPHeader.size {
            let take = min(L2CAPHeader.size - bytes.count, fragment.count)
            bytes.append(contentsOf: fragment.prefix(take))
            guard let header = L2CAPHeader(peeking: bytes) else {
                partials[handle] = .collecting(bytes)
                return nil
            }
            let length = header.frameLength
            if length > maximumFrameLength {
                errors.append(.frameTooLarge(handle: handle, length: length, limit: maximumFrameLength))
                let received = bytes.count + fragment.count - take
                if received < length { partials[handle] = .skipping(remaining: length - received) }
                return nil
            }
            bytes.reserveCapacity(length)
            return append(fragment.dropFirst(take), to: bytes, handle: handle, errors: &errors)
        }
        guard let header = L2CAPHeader(peeking: bytes) else { return nil }
        let length = header.frameLength
        let received = bytes.count + fragment.count
        if received > length {
            errors.append(.excessData(handle: handle, expected: length, received: received))
            return nil
        }
        bytes.append(contentsOf: fragment)
        if received < length {
            partials[handle] = .collecting(bytes)
            return nil
        }
        return complete(bytes[...], header: header, handle: handle, errors: &errors)
    }

    /// Turns the bytes of a whole frame into an `L2CAPFrame`, checking length and limit.
    private func complete(_ bytes: ArraySlice<UInt8>, header: L2CAPHeader, handle: UInt16,
                          errors: inout [ACLReassemblyError]) -> L2CAPFrame? {
        let length = header.frameLength
        if bytes.count > length {
            errors.append(.excessData(handle: handle, expected: length, received: bytes.count))
            return nil
        }
        if length > maximumFrameLength {
            errors.append(.frameTooLarge(handle: handle, length: length, limit: maximumFrameLength))
            return nil
        }
        return L2CAPFrame(channelID: header.channelID, payload: bytes.dropFirst(L2CAPHeader.size))
    }
}
