// The Heart Rate profile (HRP/HRS) as a client: a strap's measurements, body sensor location,
// device information and energy reset, built on the GATT client and the wire layer's one
// Heart Rate Measurement decoder.
