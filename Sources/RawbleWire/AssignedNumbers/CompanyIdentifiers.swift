// Company identifiers (Bluetooth SIG Assigned Numbers, "Company Identifiers"): a selection of
// chip makers, phone, wearable, fitness, audio and tracker vendors seen in advertising data.
// Every id and name was taken from the SIG table as shipped in Wireshark 4.0.17
// (`tshark -G values`, field btcommon.eir_ad.entry.company_id). Add entries the same way.

extension AssignedNumbers {
    /// The registered name of a Bluetooth SIG company identifier (as used in manufacturer
    /// specific data and LMP version info), e.g. `0x0059` → `"Nordic Semiconductor ASA"`;
    /// `nil` for identifiers this table does not carry.
    public static func companyName(_ id: UInt16) -> String? {
        switch id {
        case 0x0000: return "Ericsson AB"
        case 0x0001: return "Nokia Mobile Phones"
        case 0x0002: return "Intel Corp."
        case 0x0003: return "IBM Corp."
        case 0x0004: return "Toshiba Corp."
        case 0x0006: return "Microsoft"
        case 0x0008: return "Motorola"
        case 0x0009: return "Infineon Technologies AG"
        case 0x000A: return "Qualcomm Technologies International, Ltd. (QTIL)"
        case 0x000D: return "Texas Instruments Inc."
        case 0x000F: return "Broadcom Corporation"
        case 0x0013: return "Atmel Corporation"
        case 0x001D: return "Qualcomm"
        case 0x0025: return "NXP B.V."
        case 0x0030: return "ST Microelectronics"
        case 0x0036: return "Renesas Electronics Corporation"
        case 0x003A: return "Panasonic Holdings Corporation"
        case 0x003C: return "BlackBerry Limited"
        case 0x0046: return "MediaTek, Inc."
        case 0x0047: return "Bluegiga"
        case 0x0048: return "Marvell Technology Group Ltd."
        case 0x004C: return "Apple, Inc."
        case 0x0055: return "Plantronics, Inc."
        case 0x0056: return "Sony Ericsson Mobile Communications"
        case 0x0057: return "Harman International Industries, Inc."
        case 0x0059: return "Nordic Semiconductor ASA"
        case 0x005D: return "Realtek Semiconductor Corporation"
        case 0x0067: return "GN Audio A/S"
        case 0x006B: return "Polar Electro OY"
        case 0x0075: return "Samsung Electronics Co. Ltd."
        case 0x0077: return "Laird Connectivity LLC"
        case 0x0087: return "Garmin International, Inc."
        case 0x0089: return "GN Hearing A/S"
        case 0x008A: return "Jawbone"
        case 0x008C: return "Gimbal Inc."
        case 0x0094: return "Airoha Technology Corp."
        case 0x009E: return "Bose Corporation"
        case 0x009F: return "Suunto Oy"
        case 0x00C4: return "LG Electronics"
        case 0x00CC: return "Beats Electronics"
        case 0x00CD: return "Microchip Technology Inc."
        case 0x00CE: return "Eve Systems GmbH"
        case 0x00D0: return "Dexcom, Inc."
        case 0x00D2: return "Dialog Semiconductor B.V."
        case 0x00D7: return "Qualcomm Technologies, Inc."
        case 0x00DC: return "Procter & Gamble"
        case 0x00DF: return "Misfit Wearables Corp"
        case 0x00E0: return "Google"
        case 0x0103: return "Bang & Olufsen A/S"
        case 0x0118: return "Radius Networks, Inc."
        case 0x012D: return "Sony Corporation"
        case 0x012E: return "ASSA ABLOY"
        case 0x0131: return "Cypress Semiconductor"
        case 0x0157: return "Anhui Huami Information Technology Co., Ltd."
        case 0x015D: return "Estimote, Inc."
        case 0x0170: return "Roche Diabetes Care AG"
        case 0x0171: return "Amazon.com Services LLC"
        case 0x0178: return "CASIO COMPUTER CO., LTD."
        case 0x018E: return "Fitbit, Inc."
        case 0x01A9: return "Canon Inc."
        case 0x01AB: return "Meta Platforms, Inc."
        case 0x01B5: return "Nest Labs Inc."
        case 0x01BA: return "Stages Cycling LLC"
        case 0x01D1: return "August Home, Inc"
        case 0x01DA: return "Logitech International SA"
        case 0x01DD: return "Koninklijke Philips N.V."
        case 0x01F9: return "Medtronic Inc."
        case 0x01FC: return "Wahoo Fitness, LLC"
        case 0x01FD: return "Kontakt Micro-Location Sp. z o.o."
        case 0x020E: return "Omron Healthcare Co., LTD"
        case 0x0211: return "Telink Semiconductor Co. Ltd"
        case 0x022B: return "Tesla, Inc."
        case 0x027D: return "HUAWEI Technologies Co., Ltd."
        case 0x02A6: return "Robert Bosch GmbH"
        case 0x02B0: return "Bestechnic(Shanghai),Ltd"
        case 0x02B2: return "Oura Health Oy"
        case 0x02C5: return "Lenovo (Singapore) Pte Ltd."
        case 0x02E5: return "Espressif Systems (Shanghai) Co., Ltd."
        case 0x02F2: return "GoPro, Inc."
        case 0x02FF: return "Silicon Laboratories"
        case 0x038F: return "Xiaomi Inc."
        case 0x0397: return "LEGO System A/S"
        case 0x0399: return "Nikon Corporation"
        case 0x03BB: return "Abbott"
        case 0x03E0: return "Actions (Zhuhai) Technology Co., Limited"
        case 0x03FF: return "Withings"
        case 0x041E: return "Dell Computer Corporation"
        case 0x044A: return "SHIMANO INC."
        case 0x0494: return "SENNHEISER electronic GmbH & Co. KG"
        case 0x0499: return "Ruuvi Innovations Ltd."
        case 0x04F7: return "Shenzhen Goodix Technology Co., Ltd"
        case 0x0553: return "Nintendo Co., Ltd."
        case 0x055D: return "Valve Corporation"
        case 0x058E: return "Meta Platforms Technologies, LLC"
        case 0x05A7: return "Sonos Inc"
        case 0x05D6: return "Zhuhai Jieli technology Co.,Ltd"
        case 0x05F0: return "beken"
        case 0x05F1: return "The Linux Foundation"
        case 0x0600: return "iRobot Corporation"
        case 0x060F: return "Signify Netherlands B.V."
        case 0x0611: return "Beurer GmbH"
        case 0x0639: return "Shenzhen Minew Technologies Co., Ltd."
        case 0x067C: return "Tile, Inc."
        case 0x0689: return "Tacx b.v."
        case 0x068E: return "Razer Inc."
        case 0x0723: return "Ford Motor Company"
        case 0x072F: return "OnePlus Electronics (Shenzhen) Co., Ltd."
        case 0x0768: return "Peloton Interactive Inc."
        case 0x079A: return "GuangDong Oppo Mobile Telecommunications Corp., Ltd."
        case 0x07C9: return "Skullcandy, Inc."
        case 0x0822: return "adafruit industries"
        case 0x0837: return "vivo Mobile Communication Co., Ltd."
        case 0x08A4: return "Realme Chongqing Mobile Telecommunications Corp., Ltd."
        case 0x08AA: return "SZ DJI TECHNOLOGY CO.,LTD"
        case 0x08C3: return "CHIPOLO d.o.o."
        case 0x0933: return "SRAM"
        case 0x094A: return "Zwift, Inc."
        case 0x09A3: return "ARDUINO SA"
        case 0x09AC: return "Ambiq"
        case 0x09C6: return "Honor Device Co., Ltd."
        case 0x0A12: return "Dyson Technology Limited"
        case 0x0B18: return "DECATHLON SE"
        case 0x0CC2: return "Anker Innovations Limited"
        default: return nil
        }
    }

    /// Every company identifier ``companyName(_:)`` knows, in ascending order.
    public static let knownCompanyIdentifiers: [UInt16] = [
        0x0000, 0x0001, 0x0002, 0x0003, 0x0004, 0x0006, 0x0008, 0x0009, 0x000A, 0x000D, 0x000F,
        0x0013, 0x001D, 0x0025, 0x0030, 0x0036, 0x003A, 0x003C, 0x0046, 0x0047, 0x0048, 0x004C,
        0x0055, 0x0056, 0x0057, 0x0059, 0x005D, 0x0067, 0x006B, 0x0075, 0x0077, 0x0087, 0x0089,
        0x008A, 0x008C, 0x0094, 0x009E, 0x009F, 0x00C4, 0x00CC, 0x00CD, 0x00CE, 0x00D0, 0x00D2,
        0x00D7, 0x00DC, 0x00DF, 0x00E0, 0x0103, 0x0118, 0x012D, 0x012E, 0x0131, 0x0157, 0x015D,
        0x0170, 0x0171, 0x0178, 0x018E, 0x01A9, 0x01AB, 0x01B5, 0x01BA, 0x01D1, 0x01DA, 0x01DD,
        0x01F9, 0x01FC, 0x01FD, 0x020E, 0x0211, 0x022B, 0x027D, 0x02A6, 0x02B0, 0x02B2, 0x02C5,
        0x02E5, 0x02F2, 0x02FF, 0x038F, 0x0397, 0x0399, 0x03BB, 0x03E0, 0x03FF, 0x041E, 0x044A,
        0x0494, 0x0499, 0x04F7, 0x0553, 0x055D, 0x058E, 0x05A7, 0x05D6, 0x05F0, 0x05F1, 0x0600,
        0x060F, 0x0611, 0x0639, 0x067C, 0x0689, 0x068E, 0x0723, 0x072F, 0x0768, 0x079A, 0x07C9,
        0x0822, 0x0837, 0x08A4, 0x08AA, 0x08C3, 0x0933, 0x094A, 0x09A3, 0x09AC, 0x09C6, 0x0A12,
        0x0B18, 0x0CC2,
    ]
}
