NXT_TLV_TABLE_REPLY (xid=0x2):
 max option space=256 max fields=64
 allocated option space=4

 mapping table:
  class  type  length  match field
 ------  ----  ------  --------------
  0x102  0x80       4  tun_metadata0
