import { Module } from '@nestjs/common';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { KeyDeactivations } from './key-deactivations';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeysRepository, ApiKeyUsageRecorder, KeyDeactivations],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
