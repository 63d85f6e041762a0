// The Linux kernel's Bluetooth socket ABI, from Debian's libbluetooth-dev headers: struct
// layouts (sockaddr_hci, sockaddr_l2, hci_filter, hci_dev_info, bt_security), socket options
// and ioctl numbers come from these definitions, not from hand-written offsets.
//
// Header-only on purpose: nothing here links libbluetooth.so (GPL). The target has no
// pkgConfig, so SwiftPM adds no -lbluetooth; only the headers' macros, types and static inline
// helpers are used. hci_lib.h is included for its static inline hci_filter helpers alone (the
// tests check the Swift filter builder against them); none of its extern functions is called.
#ifndef RAWBLE_CBLUETOOTH_H
#define RAWBLE_CBLUETOOTH_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>

// Function-like macros Swift cannot import, as static inline functions.

/// HCIDEVUP: bring adapter `index` up (argument: the index).
static inline unsigned long rawble_ioctl_hcidevup(void) { return HCIDEVUP; }
/// HCIDEVDOWN: take adapter `index` down.
static inline unsigned long rawble_ioctl_hcidevdown(void) { return HCIDEVDOWN; }
/// HCIGETDEVLIST: fill a struct hci_dev_list_req with the adapters' indexes.
static inline unsigned long rawble_ioctl_hcigetdevlist(void) { return HCIGETDEVLIST; }
/// HCIGETDEVINFO: fill a struct hci_dev_info for the adapter whose dev_id is set.
static inline unsigned long rawble_ioctl_hcigetdevinfo(void) { return HCIGETDEVINFO; }

/// Where the flexible dev_req[] array starts in struct hci_dev_list_req (Swift drops the member).
static inline size_t rawble_dev_list_req_offset(void) { return offsetof(struct hci_dev_list_req, dev_req); }
/// The size of one struct hci_dev_req element.
static inline size_t rawble_dev_req_size(void) { return sizeof(struct hci_dev_req); }

/// The C compiler's sizes, for layout checks against what Swift imported.
static inline size_t rawble_sizeof_sockaddr_hci(void) { return sizeof(struct sockaddr_hci); }
static inline size_t rawble_sizeof_sockaddr_l2(void) { return sizeof(struct sockaddr_l2); }
static inline size_t rawble_sizeof_hci_filter(void) { return sizeof(struct hci_filter); }
static inline size_t rawble_sizeof_hci_dev_info(void) { return sizeof(struct hci_dev_info); }
static inline size_t rawble_sizeof_bt_security(void) { return sizeof(struct bt_security); }
static inline size_t rawble_offsetof_sockaddr_l2_cid(void) { return offsetof(struct sockaddr_l2, l2_cid); }
static inline size_t rawble_offsetof_sockaddr_l2_bdaddr_type(void) { return offsetof(struct sockaddr_l2, l2_bdaddr_type); }

#endif
