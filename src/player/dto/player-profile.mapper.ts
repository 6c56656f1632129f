import type { IssuedExpiringToken } from '../../auth/credential.service';
import { shownName } from '../../common/player-name';
import type { PlayerEntity } from '../entities/player.entity';
import type { PlayerProfileResponse } from './player-profile.response';

/** The player fields a profile response shows. */
export type ProfileFields = Pick<
  PlayerEntity,
  | 'uid'
  | 'username'
  | 'displayName'
  | 'banstate'
  | 'continueEnabled'
  | 'sound'
  | 'songSelectionState'
  | 'extraOptions'
  | 'prefixKey'
  | 'suffixKey'
>;

/** The profile answered by a login (PlayerLoginService) and by POST /player/options (PlayerService). */
export function toPlayerProfile(
  player: ProfileFields,
  version: number,
  access: IssuedExpiringToken,
  resume: IssuedExpiringToken | null,
  collections: string[],
): PlayerProfileResponse {
  return {
    uid: Number(player.uid),
    username: player.username,
    displayName: shownName(player.displayName, player.username),
    version,
    banstate: player.banstate,
    accessToken: access.token,
    expiresIn: access.expiresIn,
    resumeToken: resume?.token ?? '',
    resumeExpiresIn: resume?.expiresIn ?? 0,
    playerPrefix: player.prefixKey ?? '',
    playerSuffix: player.suffixKey ?? '',
    options: {
      ...player.extraOptions,
      continueEnabled: player.continueEnabled,
      sound: player.sound ?? {},
      songSelectionState: player.songSelectionState ?? {},
    },
    data: { collections },
  };
}
