"""The parts of bumble-peer (Scripts/python/bumble_peer.py, the entry point and its options):

  controller  the controllers served to outside hosts over H4 (ScannerController, ScannerLink,
              the --extended-controller / --legacy-controller variants, --snoop traces)
  devices     the advertisers on the link: standard devices' data, make/start/describe
  strap       rawble-strap, the Heart Rate strap: its GATT server, test and realistic scripts
  lab         rawble-lab, the GATT test device (--lab), and describe_gatt
"""
